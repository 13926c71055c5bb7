/**
 * One named index of a shared cache: index value → the cached objects that
 * hold it, by cache key (client-go's Indexer, tools/cache/thread_safe_store.go).
 *
 * Most values of the binder's indexes belong to one object (a record's uid,
 * the host a claim chose, a host's consumer), so a value held by one object
 * keeps that object alone, not a Map of one: at issue #12's scenario the
 * indexes held 21,000 such Maps (4.2 MB, docs/performance.md "Session 18").
 */

/** Index values of an object (none: not indexed). */
export type IndexFunc<T> = (object: T) => readonly string[];

/** The objects of one value: one object with its key, or a Map of two or more by key. */
type Bucket<T> = { readonly key: string; readonly object: T } | Map<string, T>;

export class CacheIndex<T> {
  private readonly buckets = new Map<string, Bucket<T>>();

  constructor(readonly fn: IndexFunc<T>) {}

  add(key: string, object: T): void {
    for (const value of this.fn(object)) {
      const bucket = this.buckets.get(value);
      if (bucket === undefined || (!(bucket instanceof Map) && bucket.key === key)) this.buckets.set(value, { key, object });
      else if (bucket instanceof Map) bucket.set(key, object);
      else this.buckets.set(value, new Map([[bucket.key, bucket.object], [key, object]]));
    }
  }

  /** Removes `object`, stored under `key`, from the values it was indexed under. */
  remove(key: string, object: T): void {
    for (const value of this.fn(object)) {
      const bucket = this.buckets.get(value);
      if (bucket === undefined) continue;
      if (!(bucket instanceof Map)) {
        if (bucket.key === key) this.buckets.delete(value);
        continue;
      }
      bucket.delete(key);
      if (bucket.size === 1) for (const [onlyKey, onlyObject] of bucket) this.buckets.set(value, { key: onlyKey, object: onlyObject });
    }
  }

  /** The objects that hold `value`. */
  get(value: string): T[] {
    const bucket = this.buckets.get(value);
    if (bucket === undefined) return [];
    return bucket instanceof Map ? [...bucket.values()] : [bucket.object];
  }

  clear(): void {
    this.buckets.clear();
  }
}
