/**
 * An LRU of answers from kube-apiserver (TokenReview, SubjectAccessReview)
 * that expire after `ttlMs`, as kube's webhook authenticator and authorizer
 * cache theirs. lru-cache keeps an expired entry until `max` pushes it out,
 * so a server that keeps seeing new names (claims come and go) would end up
 * holding `max` dead answers; here they are dropped at most once per
 * `ttlMs`, when the cache is used, so it holds about the last interval's
 * working set.
 *
 * Questions in flight are kept apart from the answers (concurrent askers of
 * a key share one): dropping expired answers must never touch a question
 * being asked, as lru-cache's own fetch() would (its purge aborts the
 * refetch of an expired entry, failing everyone waiting on it).
 */
import { LRUCache } from 'lru-cache';

/** How to ask kube-apiserver for the answer of one key. */
type Ask<V> = () => Promise<V>;

export class ExpiringAnswers<V extends object> {
  private readonly answers: LRUCache<string, V>;
  private readonly asking = new Map<string, Promise<V>>();
  private purgedAt: number;

  /** `now`: the clock of expiry (tests move it). */
  constructor(
    options: { readonly max: number; readonly ttlMs: number },
    private readonly now: () => number = () => performance.now(),
  ) {
    this.answers = new LRUCache<string, V>({
      max: options.max,
      ttl: options.ttlMs,
      perf: { now },
      // Read the clock on every check rather than a value lru-cache refreshes by timer.
      ttlResolution: 0,
    });
    this.purgedAt = now();
  }

  /** The cached answer for `key`, or the one `ask` fetches (concurrent fetches of a key share one); a failed ask is not cached. */
  fetch(key: string, ask: Ask<V>): Promise<V> {
    this.purgeIfDue();
    const answer = this.answers.get(key);
    if (answer !== undefined) return Promise.resolve(answer);
    const pending = this.asking.get(key);
    if (pending !== undefined) return pending;
    const asked = ask()
      .then((value) => {
        this.answers.set(key, value);
        return value;
      })
      .finally(() => {
        this.asking.delete(key);
      });
    this.asking.set(key, asked);
    return asked;
  }

  delete(key: string): void {
    this.answers.delete(key);
  }

  /** Answers held, expired ones not dropped yet included. */
  get size(): number {
    return this.answers.size;
  }

  private purgeIfDue(): void {
    const now = this.now();
    if (now - this.purgedAt < this.answers.ttl) return;
    this.purgedAt = now;
    this.answers.purgeStale();
  }
}
