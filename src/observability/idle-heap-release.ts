/**
 * Gives the V8 heap a burst grew back to the system once the server is
 * idle, with one memory-reducing full collection.
 *
 * Why: V8 sizes its old generation from the allocation rate and shrinks it
 * only when its memory reducer sees the rate fall. A burst (a restart's
 * initial lists, a wave of writes, large lists) leaves heap pages behind,
 * and a server with a trickle of work can keep them for minutes: at issue
 * #12's scenario RSS held at 364 MB after setup and 390 MB after a restart
 * (docs/performance.md, "Session 16"), against 228 MB once V8 shrank the
 * heap. kube-apiserver needs no such thing: Go's scavenger returns free
 * pages by itself. native-memory.ts does the same for malloc's heap.
 *
 * When: every few seconds the event loop's utilization over the last
 * interval decides (IdleHeapPolicy). A busy interval arms the release; an
 * idle one, with enough heap committed beyond what is used, runs it and
 * disarms it until the next busy interval. A loaded server is never
 * paused for it, an idle one at most once per burst (a collection of a
 * ~130 MB heap holds the loop for ~0.1–0.3 s).
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Counter, Histogram, type Registry } from 'prom-client';

export interface HeapSample {
  /** Event-loop utilization over the last interval, 0–1. */
  readonly utilization: number;
  /** V8 heap committed (total_heap_size) and in use (used_heap_size), bytes. */
  readonly committedBytes: number;
  readonly usedBytes: number;
}

export interface IdleHeapThresholds {
  /** At or above: the interval was busy, and the next idle one may release. */
  readonly busyUtilization: number;
  /** At or below: idle. */
  readonly idleUtilization: number;
  /** Committed beyond used worth a pause. */
  readonly minSlackBytes: number;
}

export const defaultThresholds: IdleHeapThresholds = { busyUtilization: 0.2, idleUtilization: 0.05, minSlackBytes: 48 * 2 ** 20 };

/** The decision of each interval; starts armed (starting up is a burst). */
export class IdleHeapPolicy {
  private armed = true;

  constructor(private readonly thresholds: IdleHeapThresholds = defaultThresholds) {}

  /** True when this interval should release the heap. */
  next(sample: HeapSample): boolean {
    if (sample.utilization >= this.thresholds.busyUtilization) this.armed = true;
    if (!this.armed || sample.utilization > this.thresholds.idleUtilization) return false;
    if (sample.committedBytes - sample.usedBytes < this.thresholds.minSlackBytes) return false;
    this.armed = false;
    return true;
  }
}

const intervalMs = 5_000;

export function registerIdleHeapRelease(registry: Registry): void {
  const releases = new Counter({
    name: 'hostclaim_apiserver_heap_releases_total',
    help: 'Memory-reducing full collections run because the server went idle after a burst.',
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'hostclaim_apiserver_heap_release_duration_seconds',
    help: 'How long each idle memory-reducing collection held the event loop.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const collect = fullCollection();
  const policy = new IdleHeapPolicy();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    const heap = v8.getHeapStatistics();
    if (!policy.next({ utilization, committedBytes: heap.total_heap_size, usedBytes: heap.used_heap_size })) return;
    const done = duration.startTimer();
    collect();
    done();
    releases.inc();
    // The collection's own time must not count as a busy interval.
    last = performance.eventLoopUtilization();
  }, intervalMs);
  timer.unref();
}

/**
 * V8's gc() with the memory-reducing flavor (compacting, releasing pages,
 * shrinking the young generation). Node exposes it only behind
 * --expose-gc; the flag is set here and the function taken from a fresh
 * context, so no global `gc` appears in the server's own.
 */
function fullCollection(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as NodeJS.GCFunction;
  return () => {
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  };
}
