/**
 * The bounded event history of a WatchHub, for resuming watches from a
 * resourceVersion (k8s.io/apiserver pkg/storage/cacher watch_cache.go: the
 * cyclic buffer and getAllEventsSinceLocked; watch_cache_history.go).
 *
 * Besides events it can hold *gaps*: "changes at this resourceVersion in
 * these namespaces were not kept". A derived resource records a gap instead
 * of generating events the ring would evict before anyone could read them;
 * a resume across a gap is 410 Expired, exactly as a resume across evicted
 * events.
 */
import type { ApiObject, ObjectEvent, WatchEventOut } from './types.js';

export interface HistoryEvent {
  readonly kind: 'event';
  readonly type: ObjectEvent['type'];
  readonly rv: bigint;
  readonly object: ApiObject;
  /** The state before this event, if the object was known. */
  readonly prev: ApiObject | undefined;
  /** The events watchers see for this change, built once and shared by every watcher (and their serialized bytes). */
  shared?: { added?: WatchEventOut; modified?: WatchEventOut; deleted?: WatchEventOut; deletedPrev?: WatchEventOut };
}

export interface HistoryGap {
  readonly kind: 'gap';
  readonly rv: bigint;
  /** undefined: every namespace. */
  readonly namespaces: ReadonlySet<string> | undefined;
}

export type HistoryEntry = HistoryEvent | HistoryGap;

export class WatchHistory {
  private readonly ring: (HistoryEntry | undefined)[];
  private start = 0;
  private length = 0;
  /** A resume from any resourceVersion ≥ this one finds every change it needs in the ring. */
  private oldest = 0n;

  /**
   * `inclusive`: several changes may share a resourceVersion, so a resume
   * from X replays the changes at X too (≥ X); otherwise (one change per
   * resourceVersion, kube's case) only those after X.
   */
  constructor(
    readonly capacity: number,
    readonly inclusive: boolean,
  ) {
    this.ring = new Array<HistoryEntry | undefined>(capacity);
  }

  get size(): number {
    return this.length;
  }

  /** The oldest resourceVersion a watch can resume from; older ones are 410 Expired. */
  get oldestResumable(): bigint {
    return this.oldest;
  }

  /** Empties the ring; the window starts at rv (a relist). */
  restart(rv: bigint): void {
    this.ring.fill(undefined);
    this.start = 0;
    this.length = 0;
    this.oldest = rv;
  }

  append(entry: HistoryEntry): void {
    if (this.length === this.capacity) {
      const evicted = this.at(0);
      this.ring[this.start] = undefined;
      this.start = (this.start + 1) % this.capacity;
      this.length--;
      // Inclusive: other changes at the evicted resourceVersion may be gone too.
      this.oldest = this.inclusive ? evicted.rv + 1n : evicted.rv;
    }
    this.ring[(this.start + this.length) % this.capacity] = entry;
    this.length++;
  }

  at(index: number): HistoryEntry {
    const entry = this.ring[(this.start + index) % this.capacity];
    if (entry === undefined) throw new Error('WatchHub history corrupted');
    return entry;
  }

  /** Index of the first entry a resume from rv replays: resourceVersion > rv (inclusive: ≥ rv). */
  firstFrom(rv: bigint): number {
    const inclusive = this.inclusive;
    let low = 0;
    let high = this.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const entryRv = this.at(mid).rv;
      if (inclusive ? entryRv >= rv : entryRv > rv) high = mid;
      else low = mid + 1;
    }
    return low;
  }
}
