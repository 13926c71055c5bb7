/**
 * Replica write watermarks: a consistent read of the records proven fresh
 * without asking kube-apiserver.
 *
 * Only replicas of this server write the records (the REST layer and the
 * binder; kube's garbage collector and namespace deletion act on HostClaims
 * through this API, and tenant ownerReferences live in record annotations,
 * so kube never writes one). Each replica keeps the highest record
 * revision it has acknowledged, raised before the answer leaves
 * (acknowledge). A consistent read asks every live peer (replica-membership.ts)
 * for its watermark, together with the newest record revision its cache
 * holds (what it may have shown anyone), and waits until its own records
 * cache has reached the highest (target): every write acknowledged before
 * the read started was acknowledged by some replica, whose watermark was
 * raised by then. One round is shared by every read waiting when it starts,
 * and a read is never served by a round that started before it arrived.
 *
 * What keeps that true as replicas come and go:
 * - A replica acknowledges no write before every peer in its view knows it
 *   (registered): peers learn of it from its Lease, and the later of two
 *   replicas starting together sees the other's Lease in its first list.
 * - A peer that departs (deleted Lease, expired, replaced on its address)
 *   may have acknowledged writes this cache has not seen: reads fence on
 *   kube-apiserver's current revision once (the floor) before trusting
 *   rounds again, as they do once at startup.
 * - A peer that cannot be asked (no URL, unreachable, another identity at
 *   its URL, no answer within roundTimeoutMs) makes the round inconclusive:
 *   the read falls back to probing kube-apiserver (consistent-read.ts).
 *   It is not asked again for downMs.
 *
 * HardwareData's inputs are written by baremetal-operator and admins, so
 * its reads keep probing.
 */
import { revision } from '../api/rest/types.js';
import { BatchCoalescer } from './consistent-read.js';
import { timedOut, unavailableNow } from './errors.js';
import type { Peer } from './replica-membership.js';

/** A peer's answer to a round. */
export interface PeerAnswer {
  readonly identity: string;
  /** The highest record revision it acknowledged or holds. */
  readonly watermark: string;
  /** Whether the asking replica is a live peer in its view. */
  readonly knowsAsker: boolean;
}

export type AskPeer = (url: string, asker: string, signal: AbortSignal) => Promise<PeerAnswer>;

/** What the watermarks need of the membership. */
export interface MembershipView {
  readonly identity: string;
  hasSynced(): boolean;
  leaseIncarnation(): number;
  ownLeaseValid(): boolean;
  peers(): Peer[];
  knows(identity: string): boolean;
  onDeparture(listener: () => void): () => void;
}

/** Where a consistent read's freshness target comes from; undefined: prove it with a probe instead. */
export interface FreshnessTargets {
  target(): Promise<bigint | undefined>;
}

/** The write side: every acknowledged record write passes here. */
export interface WriteAcknowledgement {
  /** Throws 503 while this replica may not acknowledge writes. */
  admit(): void;
  /** Raises the watermark to the write's revision (undefined: unknown, read kube-apiserver's current one). */
  acknowledged(resourceVersion: string | undefined): Promise<void>;
}

/** Both sides, as a records store uses them. */
export interface ReplicaConsistency extends FreshnessTargets, WriteAcknowledgement {}

/** Without watermarks (unit tests): every consistent read probes kube-apiserver, writes acknowledge nothing. */
export const standaloneReplica: ReplicaConsistency = {
  target: () => Promise.resolve(undefined),
  admit: () => undefined,
  acknowledged: () => Promise.resolve(),
};

export interface WatermarkOptions {
  readonly roundTimeoutMs?: number;
  readonly downMs?: number;
  /** How often startup looks again (membership synced, every peer knowing this replica), and the pause before retrying a failed floor read: Ready waits on the former. */
  readonly retryMs?: number;
  readonly onPeerError?: (peer: Peer, error: unknown) => void;
  readonly onError?: (error: unknown) => void;
  /** Whether the records can be read yet (their CRD installed, the cache listed): the startup floor waits for it. */
  readonly storageReady?: () => boolean;
}

export class ReplicaWatermarks implements ReplicaConsistency {
  private written = 0n;
  private floor = 0n;
  private floorPending = true;
  private floorGeneration = 0;
  private floorProbing = false;
  /** The own Lease's incarnation every peer confirmed knowing (-1: none yet). */
  private registeredIncarnation = -1;
  private registering = false;
  private stopped = false;
  private readonly rounds = new BatchCoalescer<bigint | undefined>();
  private readonly downUntil = new Map<string, number>();
  private readonly roundTimeoutMs: number;
  private readonly downMs: number;
  private readonly retryMs: number;
  private removeDepartureListener: (() => void) | undefined;

  constructor(
    private readonly membership: MembershipView,
    /** The newest record revision the records cache holds (-1 before it exists). */
    private readonly newestRecordRevision: () => bigint,
    private readonly askPeer: AskPeer,
    /** kube-apiserver's current revision of the records (a consistent read). */
    private readonly currentRevision: () => Promise<bigint>,
    private readonly options: WatermarkOptions = {},
  ) {
    this.roundTimeoutMs = options.roundTimeoutMs ?? 1000;
    this.downMs = options.downMs ?? 2000;
    this.retryMs = options.retryMs ?? 100;
  }

  /** Once the membership and the records' storage are ready: the startup floor, then registration. */
  start(): void {
    this.removeDepartureListener = this.membership.onDeparture(() => {
      this.raiseFloor();
    });
    void this.startWhenSynced();
  }

  stop(): void {
    this.stopped = true;
    this.removeDepartureListener?.();
  }

  /** Every peer knows this replica's current Lease: it may acknowledge writes (and is ready). */
  isRegistered(): boolean {
    return this.registeredIncarnation === this.membership.leaseIncarnation() && this.registeredIncarnation > 0;
  }

  /**
   * Refused (503, Retry-After) before every peer knows this replica, or
   * while its Lease is stale: kube-apiserver did not answer its renewals,
   * so the write would most likely fail the same way.
   */
  admit(): void {
    if (!this.isRegistered()) void this.register();
    if (!this.isRegistered() || !this.membership.ownLeaseValid()) throw unavailableNow('storage');
  }

  async acknowledged(resourceVersion: string | undefined): Promise<void> {
    // Written while peers may have dropped this replica: its outcome cannot be vouched for, as a write that timed out.
    if (!this.membership.ownLeaseValid()) throw timedOut('storage');
    let written = revision(resourceVersion);
    if (written < 0n) written = await this.currentRevision();
    if (written > this.written) this.written = written;
  }

  /** This replica's answer to a peer's round. */
  answer(asker: string): PeerAnswer {
    const newest = this.newestRecordRevision();
    return {
      identity: this.membership.identity,
      watermark: String(newest > this.written ? newest : this.written),
      knowsAsker: this.membership.knows(asker),
    };
  }

  /** The revision the records cache must reach for a read arriving now; undefined when rounds cannot prove it. */
  target(): Promise<bigint | undefined> {
    return this.rounds.run('round', '', 1, () => this.round());
  }

  private async round(): Promise<bigint | undefined> {
    if (!this.membership.hasSynced()) return undefined;
    // Before the floor's state is read: a peer expiring now is reported (and raises the floor) here.
    const peers = this.membership.peers();
    if (this.floorPending) return undefined;
    let highest = this.floor > this.written ? this.floor : this.written;
    const answers = await Promise.all(peers.map((peer) => this.ask(peer)));
    for (const answer of answers) {
      if (answer === undefined) return undefined;
      const watermark = revision(answer.watermark);
      if (watermark > highest) highest = watermark;
    }
    return highest;
  }

  private async ask(peer: Peer): Promise<PeerAnswer | undefined> {
    if (peer.url === undefined) return undefined;
    if ((this.downUntil.get(peer.identity) ?? -Infinity) > performance.now()) return undefined;
    try {
      const answer = await this.askPeer(peer.url, this.membership.identity, AbortSignal.timeout(this.roundTimeoutMs));
      if (answer.identity !== peer.identity || revision(answer.watermark) < 0n) throw new Error(`${peer.url} answered as ${answer.identity}`);
      this.downUntil.delete(peer.identity);
      return answer;
    } catch (error) {
      this.downUntil.set(peer.identity, performance.now() + this.downMs);
      this.options.onPeerError?.(peer, error);
      return undefined;
    }
  }

  private async startWhenSynced(): Promise<void> {
    const storageReady = this.options.storageReady ?? (() => true);
    while (!this.stopped && !(this.membership.hasSynced() && storageReady())) await this.pause();
    this.raiseFloor();
    await this.register();
  }

  /** Until every live peer confirms it knows this replica's current Lease (one loop at a time). */
  private async register(): Promise<void> {
    if (this.registering) return;
    this.registering = true;
    while (!this.stopped && !this.isRegistered()) {
      const incarnation = this.membership.leaseIncarnation();
      const answers = incarnation > 0 && this.membership.hasSynced() ? await Promise.all(this.membership.peers().map((peer) => this.ask(peer))) : [undefined];
      if (answers.every((answer) => answer?.knowsAsker === true) && incarnation === this.membership.leaseIncarnation()) this.registeredIncarnation = incarnation;
      else await this.pause();
    }
    this.registering = false;
  }

  /** Reads fall back to probes until a fence on kube-apiserver's current revision, taken from now on, has come back. */
  private raiseFloor(): void {
    this.floorPending = true;
    this.floorGeneration++;
    if (!this.floorProbing) void this.probeFloor();
  }

  private async probeFloor(): Promise<void> {
    this.floorProbing = true;
    while (!this.stopped) {
      const generation = this.floorGeneration;
      try {
        const current = await this.currentRevision();
        if (current > this.floor) this.floor = current;
        if (generation === this.floorGeneration) {
          this.floorPending = false;
          break;
        }
      } catch (error) {
        this.options.onError?.(error);
        await this.pause();
      }
    }
    this.floorProbing = false;
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, this.retryMs).unref());
  }
}
