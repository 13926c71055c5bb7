/**
 * Records core/v1 Events, the way client-go's event recorder does for
 * controllers: fire and forget (an Event that cannot be written is logged,
 * never fails the work that produced it). kubectl describe finds them by
 * involvedObject name, namespace, kind and uid.
 *
 * Events land in tenant namespaces, so they carry nothing about the
 * infrastructure: `reportingInstance` is the component name, not the
 * replica's host (pod) name that kube's own controllers put there. Which
 * replica acted is in its log, correlated by the claim.
 */
import { randomBytes } from 'node:crypto';
import type { KubeClient } from './kube-client.js';

export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  constructor(
    private readonly client: KubeClient,
    private readonly component: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  record(involved: InvolvedObject, type: EventType, reason: string, message: string): void {
    const now = new Date().toISOString();
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${involved.name.slice(0, 200)}.${Date.now().toString(16)}${randomBytes(4).toString('hex')}`, namespace: involved.namespace },
      involvedObject: involved,
      type,
      reason,
      message,
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: this.component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    this.client.create(`/api/v1/namespaces/${involved.namespace}/events`, event).catch(this.onError);
  }
}
