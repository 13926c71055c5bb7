/**
 * The lists a paginated read from memory began, kept for their next pages,
 * as kube-apiserver's cacher keeps snapshots of its store for the pages of
 * a list it served (k8s.io/apiserver pkg/storage/cacher: store_btree.go
 * storeSnapshotter; KEP-4988 ListFromCacheSnapshot): every page of one
 * list shows the state at the first page's resourceVersion.
 *
 * A snapshot is the selected objects in key order: references to the
 * cache's objects, which are replaced, never changed, so about 8 bytes an
 * item. Kept `ttlMs` after its last use, at most `capacity` of them (the
 * least recently used go first). A page whose snapshot is gone (evicted,
 * expired, or the list began on another replica) is read from
 * kube-apiserver at the token's resourceVersion, as before this cache.
 */
import type { ApiObject } from '../api/rest/types.js';

interface Snapshot {
  readonly items: readonly ApiObject[];
  expiresAt: number;
}

const defaultCapacity = 64;
const defaultTtlMs = 60_000;

export class ListSnapshots {
  /** Insertion order is use order: the first entry is the least recently used. */
  private readonly snapshots = new Map<string, Snapshot>();

  constructor(
    private readonly capacity = defaultCapacity,
    private readonly ttlMs = defaultTtlMs,
    private readonly now: () => number = () => performance.now(),
  ) {}

  put(key: string, items: readonly ApiObject[]): void {
    this.snapshots.delete(key);
    this.snapshots.set(key, { items, expiresAt: this.now() + this.ttlMs });
    this.evict();
  }

  /** The snapshot, kept for another `ttlMs`; undefined when it is gone. */
  get(key: string): readonly ApiObject[] | undefined {
    const snapshot = this.snapshots.get(key);
    if (snapshot === undefined) return undefined;
    this.snapshots.delete(key);
    if (snapshot.expiresAt <= this.now()) return undefined;
    snapshot.expiresAt = this.now() + this.ttlMs;
    this.snapshots.set(key, snapshot);
    return snapshot.items;
  }

  get size(): number {
    return this.snapshots.size;
  }

  private evict(): void {
    const now = this.now();
    for (const [key, snapshot] of this.snapshots) {
      if (this.snapshots.size <= this.capacity && snapshot.expiresAt > now) break;
      this.snapshots.delete(key);
    }
  }
}
