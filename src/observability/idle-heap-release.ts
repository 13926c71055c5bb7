/**
 * Gives the memory a burst grew back to the system once the server is
 * idle, with one memory-reducing full collection.
 *
 * Why: V8 sizes its old generation from the allocation rate and shrinks it
 * only when its memory reducer sees the rate fall; and the malloc'd memory
 * of garbage Buffers (request and response bodies, TLS records) is freed
 * only when a full collection finds them. A burst (a restart's initial
 * lists, a wave of writes, a thousand watches opened) leaves both behind,
 * and a server with a trickle of work can keep them for minutes: at issue
 * #12's scenario RSS held at 316 MB after setup, against 183 MB for the same
 * caches once idle after a restart (docs/performance.md, "Session 19").
 * kube-apiserver needs no such thing: Go's scavenger returns free pages by
 * itself. native-memory.ts hands back what malloc then holds free.
 *
 * When (IdleHeapPolicy): every few seconds the event loop's utilization
 * over the last interval decides. A busy interval arms the release; an
 * idle one runs it if RSS has grown by at least `minGrowthBytes` over the
 * lowest it was in an idle interval since the last release, and disarms it
 * until the next busy interval. A loaded server is never paused for it, an
 * idle one at most once per burst that grew it (0.3–0.6 s at the full
 * scenario), and a steady read load, which grows nothing, not at all.
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Counter, Histogram, type Registry } from 'prom-client';

export interface HeapSample {
  /** Event-loop utilization over the last interval, 0–1. */
  readonly utilization: number;
  /** Resident set size now, bytes. */
  readonly rssBytes: number;
}

export interface IdleHeapThresholds {
  /** At or above: the interval was busy, and the next idle one may release. */
  readonly busyUtilization: number;
  /** At or below: idle. */
  readonly idleUtilization: number;
  /** Growth of RSS over its idle low since the last release worth a pause. */
  readonly minGrowthBytes: number;
}

export const defaultThresholds: IdleHeapThresholds = { busyUtilization: 0.2, idleUtilization: 0.05, minGrowthBytes: 48 * 2 ** 20 };

/** The decision of each interval; starts armed with no low (starting up is a burst). */
export class IdleHeapPolicy {
  private armed = true;
  /** The lowest RSS of an idle interval since the last release; unknown until the interval after one. */
  private idleLowBytes: number | undefined;
  private releasedLastInterval = false;

  constructor(private readonly thresholds: IdleHeapThresholds = defaultThresholds) {}

  /** True when this interval should release. */
  next(sample: HeapSample): boolean {
    const idle = sample.utilization <= this.thresholds.idleUtilization;
    // What a release left, read an interval later, starts the new low; malloc is trimmed every 10 s (native-memory.ts), so a later idle interval may lower it.
    if (this.releasedLastInterval) this.idleLowBytes = sample.rssBytes;
    this.releasedLastInterval = false;
    if (sample.utilization >= this.thresholds.busyUtilization) this.armed = true;
    if (!idle) return false;
    const low = this.idleLowBytes;
    const grown = low === undefined || sample.rssBytes - low >= this.thresholds.minGrowthBytes;
    if (low !== undefined) this.idleLowBytes = Math.min(low, sample.rssBytes);
    if (!this.armed || !grown) return false;
    this.armed = false;
    this.releasedLastInterval = true;
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
  const collect = memoryReducingCollection();
  const policy = new IdleHeapPolicy();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (!policy.next({ utilization, rssBytes: process.memoryUsage.rss() })) return;
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
 * V8's heap growing factor, in percent over 100, for the release's
 * collection only (--heap-growing-percent; 0, the default, lets V8 choose
 * from its collection and allocation speeds).
 *
 * Why: a memory-reducing collection sets the old generation's next limit
 * just above what is live (V8's minimal growing factor, 1.1), so the next
 * burst runs into one full collection after another until V8 has grown the
 * limit again. Held at the full scenario, 1,000 watches opened right after a
 * release met 5–6 full collections instead of 2–4, and their events' p99
 * delivery rose from ~130 to ~190 ms (docs/performance.md, "Session 19").
 * A limit of twice what is live leaves the burst that headroom; it is a
 * threshold, not memory, so RSS stays at what the collection left. The
 * flag is reset to 0 afterwards: a --heap-growing-percent given to the
 * server's Node would not survive its first release (the image sets none).
 */
const releaseGrowingPercent = 100;

/**
 * V8's gc() with the memory-reducing flavor (compacting, releasing pages,
 * shrinking the young generation). Node exposes it only behind
 * --expose-gc; the flag is set here and the function taken from a fresh
 * context, so no global `gc` appears in the server's own. V8 reads its
 * growing factor each time it sets a limit, so setting it around the call
 * affects only this collection's.
 */
export function memoryReducingCollection(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as NodeJS.GCFunction;
  return () => {
    v8.setFlagsFromString(`--heap-growing-percent=${releaseGrowingPercent}`);
    try {
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    } finally {
      v8.setFlagsFromString('--heap-growing-percent=0');
    }
  };
}
