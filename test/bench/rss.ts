/**
 * A process's memory after a burst (setup's writes, a restart's initial
 * lists), read as an operator would size it: where RSS settles once the
 * process is idle, beside what it was a few seconds after the burst and the
 * most it ever held.
 *
 * Why "settled": V8 keeps a burst's heap pages until its memory reducer
 * runs, about 8 s after allocation slows down (v8 src/heap/memory-reducer.cc,
 * kLongDelayMs), then shrinks the heap over a few collections; glibc's free
 * memory goes back at the server's next malloc_trim (every 10 s). Measured at
 * the full scenario (docs/performance.md, session 16), a restarted server
 * held 358 MB 5 s after Ready and 228 MB 16 s after, flat from then on. Go's
 * runtime returns a burst's pages gradually too (its scavenger).
 */
import { statusBytes } from './load.js';

export interface RssFigure {
  /** RSS a few seconds (the caller's settle delay) after the burst. */
  readonly firstMb: number;
  /** RSS once it held still for `windowSeconds`, or the last sample at `maxSeconds`. */
  readonly settledMb: number;
  /** From the first sample to the settled one. */
  readonly settledAfterSeconds: number;
  /** False when it was still moving at `maxSeconds` (settledMb is then the last sample). */
  readonly settled: boolean;
  /** VmHWM: the most the process held at any time since it started. */
  readonly peakMb: number;
}

export interface SettleOptions {
  /** RSS counts as settled when `windowSeconds` of samples (one a second) lie within `toleranceMb` of each other. */
  readonly windowSeconds: number;
  readonly toleranceMb: number;
  readonly maxSeconds: number;
}

/** The bench's 15 s (BENCH_RSS_SETTLE_S) covers V8's reducer delay plus a malloc_trim period, so a plateau before either is not taken for the end. */
export function settleOptions(windowSeconds: number): SettleOptions {
  return { windowSeconds, toleranceMb: 3, maxSeconds: Math.max(120, 4 * windowSeconds) };
}

/** The index of the sample at which the last `window` samples first lie within `tolerance`, or undefined. */
export function settledIndex(samples: readonly number[], window: number, tolerance: number): number | undefined {
  for (let end = window; end < samples.length; end++) {
    const span = samples.slice(end - window, end + 1);
    if (Math.max(...span) - Math.min(...span) <= tolerance) return end;
  }
  return undefined;
}

export async function settledRss(pid: number, options: SettleOptions): Promise<RssFigure> {
  const samples = [await statusMb(pid, 'VmRSS')];
  let at: number | undefined;
  while (at === undefined && samples.length <= options.maxSeconds) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    samples.push(await statusMb(pid, 'VmRSS'));
    at = settledIndex(samples, options.windowSeconds, options.toleranceMb);
  }
  const index = at ?? samples.length - 1;
  return {
    firstMb: samples[0] ?? Number.NaN,
    settledMb: samples[index] ?? Number.NaN,
    settledAfterSeconds: index,
    settled: at !== undefined,
    peakMb: await statusMb(pid, 'VmHWM'),
  };
}

/** In MB (10^6 bytes), as the bench's other figures. */
async function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  return (await statusBytes(pid, field)) / 1e6;
}

export function describeRss(figure: RssFigure): string {
  const settled = figure.settled
    ? `settled at ${figure.settledMb.toFixed(0)} MB ${figure.settledAfterSeconds} s later`
    : `still moving ${figure.settledAfterSeconds} s later, at ${figure.settledMb.toFixed(0)} MB`;
  return `${figure.firstMb.toFixed(0)} MB; ${settled}; peak ${figure.peakMb.toFixed(0)} MB`;
}
