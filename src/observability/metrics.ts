/**
 * Prometheus metrics with kube-apiserver's names, labels and buckets, so
 * existing apiserver dashboards and alerts work for this server too.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ConsistentReadMetrics } from './consistent-read-metrics.js';
import { ControllerMetrics } from './controller-metrics.js';
import { registerEventLoopBusyMetric } from './event-loop.js';
import { registerIdleHeapRelease } from './idle-heap-release.js';
import { registerNativeMemoryRelease } from './native-memory.js';

const requestLabels = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
const latencyBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

export type RequestLabels = Record<(typeof requestLabels)[number], string>;

export class ApiServerMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: [...requestLabels, 'code'],
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: [...requestLabels],
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  readonly responseSizes = new Histogram({
    name: 'apiserver_response_sizes',
    help: 'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
    labelNames: [...requestLabels],
    buckets: [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9],
    registers: [this.registry],
  });
  readonly longRunning = new Gauge({
    name: 'apiserver_longrunning_requests',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.',
    labelNames: [...requestLabels],
    registers: [this.registry],
  });
  readonly inflight = new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'],
    registers: [this.registry],
  });
  readonly authorizationDecisions = new Counter({
    name: 'hostclaim_apiserver_authorization_decisions_total',
    help: 'Authorization decisions by result and by whether a SubjectAccessReview was needed.',
    labelNames: ['decision'],
    registers: [this.registry],
  });
  readonly authenticationAttempts = new Counter({
    name: 'authentication_attempts',
    help: 'Counter of authenticated attempts.',
    labelNames: ['result'],
    registers: [this.registry],
  });
  /** The binder's leader election, work queue and reconciles. */
  readonly controllers = new ControllerMetrics(this.registry);
  /** The probes and fences of consistent reads from the shared caches. */
  readonly consistentReads = new ConsistentReadMetrics(this.registry);

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    registerEventLoopBusyMetric(this.registry);
    registerNativeMemoryRelease(this.registry);
    registerIdleHeapRelease(this.registry);
  }
}
