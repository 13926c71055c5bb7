/**
 * A work queue with client-go's guarantees: a key is queued at most once
 * however often it is added, never processed by two workers at the same
 * time (an add during processing runs it again afterwards), and failures are
 * retried with per-key exponential backoff.
 */
import type { ReconcileOutcome, WorkQueueObserver } from '../observability/controller-metrics.js';

export interface WorkQueueOptions {
  readonly workers: number;
  readonly minRetryMs?: number;
  readonly maxRetryMs?: number;
  /** Told of adds, the depth and every reconcile's outcome (metrics). */
  readonly observer?: WorkQueueObserver;
}

/** What a reconcile asks of the queue: nothing, or to look again after a delay. */
export type ReconcileResult = { readonly requeueAfterMs?: number } | undefined;

export class WorkQueue {
  private readonly queue: string[] = [];
  /** Each queued key, with when it was queued (performance.now()). */
  private readonly queued = new Map<string, number>();
  private readonly processing = new Set<string>();
  private readonly dirtyWhileProcessing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { readonly timer: NodeJS.Timeout; readonly at: number }>();
  private readonly idleWaiters: (() => void)[] = [];
  private running = 0;
  private started = false;
  private stopped = false;

  constructor(
    private readonly reconcile: (key: string) => Promise<ReconcileResult>,
    private readonly options: WorkQueueOptions,
    private readonly onError: (key: string, error: unknown) => void,
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirtyWhileProcessing.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.set(key, performance.now());
    this.queue.push(key);
    this.options.observer?.added();
    this.pump();
  }

  /** Adds the key after a delay; of several pending delays for one key, the earliest wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    const at = Date.now() + delayMs;
    const pending = this.timers.get(key);
    if (pending !== undefined) {
      if (pending.at <= at) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { timer, at });
  }

  /**
   * Starts the workers. Keys added before are kept, so a controller can
   * connect its event handlers first and start once its caches are synced,
   * as client-go controllers do.
   */
  start(): void {
    this.started = true;
    this.pump();
  }

  /** Stops taking work; resolves when the workers in flight are done. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.length = 0;
    this.queued.clear();
    this.options.observer?.depth(0);
    if (this.running === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.started && !this.stopped && this.running < this.options.workers && this.queue.length > 0) {
      const key = this.queue.shift();
      if (key === undefined) break;
      const waitedMs = performance.now() - (this.queued.get(key) ?? performance.now());
      this.queued.delete(key);
      this.processing.add(key);
      this.running++;
      void this.process(key, waitedMs / 1000);
    }
    this.options.observer?.depth(this.queue.length);
  }

  private async process(key: string, waitedSeconds: number): Promise<void> {
    const started = performance.now();
    const work = this.options.observer?.started(waitedSeconds);
    const reconciled = (outcome: ReconcileOutcome): void => work?.finished(outcome, (performance.now() - started) / 1000);
    try {
      const result = await this.reconcile(key);
      this.failures.delete(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
      reconciled(result?.requeueAfterMs === undefined ? 'success' : 'requeue_after');
    } catch (error) {
      reconciled('error');
      this.onError(key, error);
      this.addAfter(key, this.backoff(key));
    } finally {
      this.processing.delete(key);
      this.running--;
      if (this.dirtyWhileProcessing.delete(key)) this.add(key);
      if (this.running === 0 && this.stopped) for (const waiter of this.idleWaiters.splice(0)) waiter();
      this.pump();
    }
  }

  private backoff(key: string): number {
    const attempts = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempts);
    const min = this.options.minRetryMs ?? 100;
    return Math.min(min * 2 ** (attempts - 1), this.options.maxRetryMs ?? 30_000);
  }
}
