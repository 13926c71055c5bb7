/**
 * Waiting for a WatchHub's feed to reach a resourceVersion: NotOlderThan
 * reads and watches from a future resourceVersion (k8s.io/apiserver
 * pkg/storage/cacher watch_cache.go waitUntilFreshAndBlock, with its
 * blockTimeout and 504 "Too large resource version").
 */
import { stoppedError, tooLarge } from './watch-events.js';

export interface Waiter {
  readonly rv: bigint;
  readonly wake: () => void;
}

export class FreshnessWaiters {
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly timeoutMs: number,
    private readonly current: () => bigint,
    private readonly stopped: () => boolean,
  ) {}

  add(waiter: Waiter): void {
    this.waiters.add(waiter);
  }

  delete(waiter: Waiter): void {
    this.waiters.delete(waiter);
  }

  /** Resolves once the feed reaches rv; rejects with 504 after the timeout, 429 after stop, the signal's reason on abort. */
  wait(rv: bigint, signal: AbortSignal | undefined): Promise<void> {
    if (rv <= this.current()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(abortReason(signal));
        return;
      }
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(waiter);
      };
      const onAbort = (): void => {
        finish();
        reject(abortReason(signal));
      };
      const waiter: Waiter = {
        rv,
        wake: () => {
          finish();
          if (this.stopped()) reject(stoppedError());
          else resolve();
        },
      };
      const timer = setTimeout(() => {
        finish();
        reject(tooLarge(rv, this.current()));
      }, this.timeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** Wakes every waiter the feed has reached. */
  wakeReached(): void {
    if (this.waiters.size === 0) return;
    const current = this.current();
    for (const waiter of [...this.waiters]) {
      if (waiter.rv <= current) {
        this.waiters.delete(waiter);
        waiter.wake();
      }
    }
  }

  wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter.wake();
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}
