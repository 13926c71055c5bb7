/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package does it: a candidate takes the lease when it is
 * free or when its holder has not renewed it for a whole lease duration, as
 * measured on this candidate's own clock since it last saw the lease change
 * (never by comparing timestamps written by another machine). Every write
 * carries the resourceVersion read, so two candidates can never both win.
 * A leader that cannot renew within the renew deadline steps down before
 * anyone else can take over; each call on the Lease is bounded by half the
 * renew deadline, so a kube-apiserver that hangs (frozen, its etcd gone)
 * cannot hold a step-down back past the deadline.
 */
import { randomUUID } from 'node:crypto';
import { isConflict, isNotFound, type KubeClient } from './kube-client.js';

export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name: string;
  readonly identity?: string;
  readonly leaseDurationSeconds?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

export interface LeaderCallbacks {
  /** Called when this candidate becomes leader; the signal aborts when it stops leading. */
  readonly onStartedLeading: (signal: AbortSignal) => void;
  readonly onError?: (error: unknown) => void;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly path: string;
  private observed: { resourceVersion: string; at: number } | undefined;
  private leading: AbortController | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenewal = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly config: LeaderElectionConfig,
    private readonly callbacks: LeaderCallbacks,
  ) {
    this.identity = config.identity ?? randomUUID();
    this.leaseDurationMs = (config.leaseDurationSeconds ?? 10) * 1000;
    this.renewDeadlineMs = config.renewDeadlineMs ?? 8000;
    this.retryPeriodMs = config.retryPeriodMs ?? 2000;
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${config.namespace}/leases`;
  }

  start(): void {
    this.schedule(0);
  }

  isLeader(): boolean {
    return this.leading !== undefined;
  }

  /** Stops campaigning; a leader releases the lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.leading === undefined) return;
    this.stepDown();
    try {
      const lease = await this.client.get<Lease>(`${this.path}/${this.config.name}`);
      if (lease.spec.holderIdentity !== this.identity) return;
      await this.client.request('PUT', `${this.path}/${this.config.name}`, {
        body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } },
      });
    } catch (error) {
      this.callbacks.onError?.(error);
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    try {
      if (await this.tryAcquireOrRenew()) this.lastRenewal = Date.now();
    } catch (error) {
      this.callbacks.onError?.(error);
    }
    if (this.leading !== undefined && Date.now() - this.lastRenewal > this.renewDeadlineMs) this.stepDown();
    this.schedule(this.retryPeriodMs);
  }

  /** True when this candidate holds the lease after the attempt. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date().toISOString().replace(/Z$/, '000Z');
    const lease = await this.currentLease();
    if (lease === undefined) {
      await this.client.create(this.path, this.leaseFor(undefined, now), { timeoutMs: this.callTimeoutMs() });
      this.becomeLeader();
      return true;
    }
    this.observe(lease);
    const holder = lease.spec.holderIdentity ?? '';
    const observedAt = this.observed?.at ?? Date.now();
    const expired = holder === '' || Date.now() - observedAt > (lease.spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder !== this.identity && !expired) {
      if (this.leading !== undefined) this.stepDown();
      return false;
    }
    try {
      const updated = await this.client.request<Lease>('PUT', `${this.path}/${this.config.name}`, { body: this.leaseFor(lease, now), timeoutMs: this.callTimeoutMs() });
      this.observe(updated);
    } catch (error) {
      // Someone else wrote the lease first: they won this round.
      if (isConflict(error)) return false;
      throw error;
    }
    this.becomeLeader();
    return true;
  }

  private async currentLease(): Promise<Lease | undefined> {
    try {
      return await this.client.request<Lease>('GET', `${this.path}/${this.config.name}`, { timeoutMs: this.callTimeoutMs() });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private callTimeoutMs(): number {
    return this.renewDeadlineMs / 2;
  }

  private leaseFor(current: Lease | undefined, now: string): Lease {
    const takingOver = current?.spec.holderIdentity !== this.identity;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.config.name,
        namespace: this.config.namespace,
        ...(current?.metadata.resourceVersion === undefined ? {} : { resourceVersion: current.metadata.resourceVersion }),
      },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.leaseDurationMs / 1000,
        acquireTime: takingOver ? now : (current.spec.acquireTime ?? now),
        renewTime: now,
        leaseTransitions: (current?.spec.leaseTransitions ?? 0) + (takingOver && current !== undefined ? 1 : 0),
      },
    };
  }

  /** Remembers when the lease last changed, on our own clock. */
  private observe(lease: Lease): void {
    const resourceVersion = lease.metadata.resourceVersion ?? '';
    if (this.observed?.resourceVersion === resourceVersion) return;
    this.observed = { resourceVersion, at: Date.now() };
  }

  private becomeLeader(): void {
    if (this.leading !== undefined) return;
    this.leading = new AbortController();
    this.callbacks.onStartedLeading(this.leading.signal);
  }

  private stepDown(): void {
    this.leading?.abort();
    this.leading = undefined;
  }
}
