/**
 * Which replicas of this server are serving: one coordination.k8s.io/v1
 * Lease per replica process in the storage namespace, labelled, naming the
 * URL its peers reach it at (kube-apiserver's own identity Leases,
 * `apiserver-<hash>` in kube-system, work the same way).
 *
 * Consistent reads answered from memory rest on it (replica-watermarks.ts):
 * a read asks every live peer for the newest record write it acknowledged,
 * so a peer must be in the view before its first write is acknowledged,
 * and must stay in it until its writes can no longer be missed.
 *
 * - A peer is live from the moment its Lease is seen until it has not been
 *   renewed for its whole duration, as measured on this replica's clock
 *   since it last saw the Lease change (as client-go's leader election
 *   judges, never by comparing timestamps another machine wrote).
 * - A replica acknowledges writes only while its own Lease was renewed less
 *   than half a duration ago (ownLeaseValid), so by the time a peer drops
 *   it, every write it acknowledged was committed.
 * - Deleted or expired, a peer has departed: listeners run (the watermarks
 *   then fence once on kube-apiserver's current revision).
 * - A Lease naming this replica's own URL belongs to a predecessor on the
 *   same address (a restarted container): this replica holds the port, so
 *   that process is gone, and its Lease is deleted at once rather than
 *   waited out.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeObject } from './informer.js';
import { isConflict, isNotFound, type KubeClient } from './kube-client.js';
import type { SharedInformer, SharedInformerFactory } from './shared-informers.js';

export const replicaLeaseLabel = 'tenancy.metal3.io/apiserver-replica';
export const peerUrlAnnotation = 'tenancy.metal3.io/peer-url';

interface ReplicaLease extends KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: KubeObject['metadata'] & {
    readonly uid?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: { readonly holderIdentity?: string; readonly leaseDurationSeconds?: number; readonly renewTime?: string };
}

/** A live peer: who it is and where to ask it (no URL: it cannot be asked). */
export interface Peer {
  readonly identity: string;
  readonly url: string | undefined;
}

export interface MembershipOptions {
  readonly namespace: string;
  /** https://<advertised address>:<port>, or undefined when this replica cannot be reached by its peers. */
  readonly url: string | undefined;
  readonly leaseDurationSeconds?: number;
  readonly onError?: (error: unknown) => void;
}

interface Observation {
  readonly resourceVersion: string;
  /** performance.now() when this replica saw that resourceVersion first. */
  readonly at: number;
  readonly durationMs: number;
  readonly identity: string;
  readonly url: string | undefined;
}

const defaultLeaseDurationSeconds = 30;
/** An expired Lease is deleted (by whichever replica notices) after this many durations. */
const expiredLeaseRetention = 4;

export class ReplicaMembership {
  readonly identity = `${hostname()}_${randomUUID()}`;
  readonly leaseName = `hostclaim-apiserver-${randomUUID()}`;
  private readonly durationMs: number;
  private readonly path: string;
  private readonly leases: SharedInformer<ReplicaLease>;
  private readonly observed = new Map<string, Observation>();
  private readonly departureListeners = new Set<() => void>();
  /** Peers whose expiry was reported (until they renew again). */
  private readonly expired = new Set<string>();
  private own: ReplicaLease | undefined;
  /** How many times the own Lease was created: peers must learn of each one. */
  private creations = 0;
  private lastRenewal = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private removeHandler: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly client: KubeClient,
    informers: SharedInformerFactory,
    private readonly options: MembershipOptions,
  ) {
    this.durationMs = (options.leaseDurationSeconds ?? defaultLeaseDurationSeconds) * 1000;
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${options.namespace}/leases`;
    this.leases = informers.informerFor<ReplicaLease>({ path: this.path });
  }

  start(): void {
    this.removeHandler = this.leases.addEventHandler({
      onAdd: (lease) => {
        this.observe(lease);
      },
      onUpdate: (_, lease) => {
        this.observe(lease);
      },
      onDelete: (lease) => {
        const name = lease.metadata.name ?? '';
        const wasLive = this.observed.delete(name) && !this.expired.delete(name);
        if (wasLive) this.departed();
      },
    });
    void this.tick();
  }

  /** Counts the own Lease's creations: one deleted by someone and created again makes peers learn of this replica anew. */
  leaseIncarnation(): number {
    return this.creations;
  }

  /** Own Lease created and the view of the others listed. */
  hasSynced(): boolean {
    return this.own !== undefined && this.leases.hasSynced();
  }

  /** Whether this replica may acknowledge a write: its Lease was renewed recently enough that no peer can have dropped it yet. */
  ownLeaseValid(): boolean {
    return performance.now() - this.lastRenewal < this.durationMs / 2;
  }

  /** The live peers, this replica excluded; a peer expiring now is reported as departed first. */
  peers(): Peer[] {
    this.expire();
    const now = performance.now();
    const peers: Peer[] = [];
    for (const [name, seen] of this.observed) {
      if (name !== this.leaseName && now - seen.at <= seen.durationMs) peers.push({ identity: seen.identity, url: seen.url });
    }
    return peers;
  }

  /** Whether a replica of that identity is a live peer. */
  knows(identity: string): boolean {
    return this.peers().some((peer) => peer.identity === identity);
  }

  /** Called whenever a peer has departed (deleted, expired, or a predecessor found). */
  onDeparture(listener: () => void): () => void {
    this.departureListeners.add(listener);
    return () => this.departureListeners.delete(listener);
  }

  /** Stops renewing and deletes the own Lease, so peers stop asking at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.removeHandler?.();
    const own = this.own;
    if (own === undefined) return;
    await this.deleteLease(own).catch((error: unknown) => this.options.onError?.(error));
  }

  private observe(lease: ReplicaLease): void {
    const name = lease.metadata.name ?? '';
    if (lease.metadata.labels?.[replicaLeaseLabel] === undefined) return;
    const url = lease.metadata.annotations?.[peerUrlAnnotation];
    if (name !== this.leaseName && url !== undefined && url === this.options.url) {
      // A predecessor on this replica's own address: gone, since this process holds the port.
      void this.deleteLease(lease).catch((error: unknown) => this.options.onError?.(error));
      return;
    }
    const previous = this.observed.get(name);
    if (previous?.resourceVersion === lease.metadata.resourceVersion) return;
    this.expired.delete(name);
    this.observed.set(name, {
      resourceVersion: lease.metadata.resourceVersion ?? '',
      at: performance.now(),
      durationMs: (lease.spec?.leaseDurationSeconds ?? defaultLeaseDurationSeconds) * 1000,
      identity: lease.spec?.holderIdentity ?? '',
      url,
    });
  }

  private departed(): void {
    for (const listener of [...this.departureListeners]) listener();
  }

  /** Renews (or creates) the own Lease, then expires peers not renewed within their duration. */
  private async tick(): Promise<void> {
    let renewed = false;
    try {
      await this.renew();
      this.lastRenewal = performance.now();
      renewed = true;
    } catch (error) {
      this.options.onError?.(error);
    }
    this.expire();
    // After a failure, again within a second: writes wait for a renewal once kube-apiserver answers again.
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), renewed ? this.durationMs / 6 : Math.min(1000, this.durationMs / 6));
  }

  private async renew(): Promise<void> {
    const renewTime = new Date().toISOString().replace(/Z$/, '000Z');
    if (this.own === undefined) {
      this.own = await this.client.create<ReplicaLease>(this.path, this.leaseBody(renewTime), { timeoutMs: this.durationMs / 6 });
      this.creations++;
      return;
    }
    try {
      this.own = await this.put({ ...this.own, spec: { ...this.own.spec, renewTime } });
    } catch (error) {
      // Deleted by someone: peers saw this replica depart, so it acknowledges nothing until created again and known anew.
      if (isNotFound(error)) {
        this.own = undefined;
        this.lastRenewal = -Infinity;
      }
      if (!isConflict(error)) throw error;
      // A renewal that timed out here was applied after all (kube-apiserver frozen, then back): renew what is there.
      const current = await this.client.get<ReplicaLease>(`${this.path}/${this.leaseName}`);
      this.own = await this.put({ ...current, spec: { ...current.spec, renewTime } });
    }
  }

  private put(lease: ReplicaLease): Promise<ReplicaLease> {
    return this.client.request<ReplicaLease>('PUT', `${this.path}/${this.leaseName}`, { body: lease, timeoutMs: this.durationMs / 6 });
  }

  private leaseBody(renewTime: string): ReplicaLease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.leaseName,
        namespace: this.options.namespace,
        labels: { [replicaLeaseLabel]: '' },
        ...(this.options.url === undefined ? {} : { annotations: { [peerUrlAnnotation]: this.options.url } }),
      },
      spec: { holderIdentity: this.identity, leaseDurationSeconds: this.durationMs / 1000, renewTime },
    };
  }

  private expire(): void {
    const now = performance.now();
    let departed = false;
    for (const [name, seen] of this.observed) {
      if (name === this.leaseName) continue;
      const silentMs = now - seen.at;
      if (silentMs <= seen.durationMs) continue;
      if (!this.expired.has(name)) {
        this.expired.add(name);
        departed = true;
      }
      if (silentMs > expiredLeaseRetention * seen.durationMs) {
        const lease = this.leases.get(this.options.namespace, name);
        if (lease !== undefined) void this.deleteLease(lease).catch((error: unknown) => this.options.onError?.(error));
      }
    }
    if (departed) this.departed();
  }

  private async deleteLease(lease: ReplicaLease): Promise<void> {
    try {
      await this.client.request('DELETE', `${this.path}/${lease.metadata.name ?? ''}`, {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: lease.metadata.uid, resourceVersion: lease.metadata.resourceVersion } },
      });
    } catch (error) {
      // Gone already, or renewed meanwhile (a live replica after all): nothing to delete.
      if (!isNotFound(error) && !isConflict(error)) throw error;
    }
  }
}
