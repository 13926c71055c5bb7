/**
 * An LRU of answers from kube-apiserver (TokenReview, SubjectAccessReview)
 * that expire after `ttlMs`, as kube's webhook authenticator and authorizer
 * cache theirs. lru-cache keeps an expired entry until `max` pushes it out,
 * so a server that keeps seeing new names (claims come and go) would end up
 * holding `max` dead answers; here they are dropped at most once per
 * `ttlMs`, when the cache is used, so it holds about the last interval's
 * working set.
 */
import { LRUCache } from 'lru-cache';

/** How to ask kube-apiserver for the answer of one key. */
type Ask<V> = () => Promise<V>;

export class ExpiringAnswers<V extends object> {
  private readonly cache: LRUCache<string, V, Ask<V>>;
  private purgedAt: number;

  /** `now`: the clock of expiry (tests move it). */
  constructor(
    options: { readonly max: number; readonly ttlMs: number },
    private readonly now: () => number = () => performance.now(),
  ) {
    this.cache = new LRUCache<string, V, Ask<V>>({
      max: options.max,
      ttl: options.ttlMs,
      perf: { now },
      // Read the clock on every check rather than a value lru-cache refreshes by timer.
      ttlResolution: 0,
      fetchMethod: async (_key, _stale, { context }) => context(),
    });
    this.purgedAt = now();
  }

  /** The cached answer for `key`, or the one `ask` fetches (concurrent fetches of a key share one). */
  fetch(key: string, ask: Ask<V>): Promise<V | undefined> {
    const now = this.now();
    if (now - this.purgedAt >= this.cache.ttl) {
      this.purgedAt = now;
      this.cache.purgeStale();
    }
    return this.cache.fetch(key, { context: ask });
  }

  delete(key: string): void {
    this.cache.delete(key);
  }

  /** Entries held, expired ones not dropped yet included. */
  get size(): number {
    return this.cache.size;
  }
}
