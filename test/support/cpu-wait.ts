/**
 * How long a process's threads have waited for a CPU (ready to run, on a
 * run queue), from Linux's /proc/<pid>/task/<tid>/schedstat: on a shared
 * machine the share of a request's time that is the machine's, not the
 * process's. 0 where the kernel does not say (another OS, no schedstats).
 * get-loop-worker.ts reads the same field for one thread.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The threads that carry a request in a Node server: its event loop, and worker threads (the body decoder). */
const requestThreads = new Set(['MainThread', 'node', 'WorkerThread']);

/** Milliseconds each event-loop and worker thread of process `pid` has waited on a run queue so far, by thread id. */
export function runQueueWaits(pid: number): ReadonlyMap<string, number> {
  const waits = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const task = `/proc/${pid}/task/${tid}`;
      if (requestThreads.has(readFileSync(`${task}/comm`, 'utf8').trim())) waits.set(tid, Number(readFileSync(`${task}/schedstat`, 'utf8').split(' ')[1]) / 1e6);
    }
  } catch {
    // No schedstat here: nothing is known to be the machine's.
  }
  return waits;
}

/**
 * The machine's share of an interval, between two runQueueWaits: the longest any one of those threads waited. The
 * threads' waits may overlap, so no more is known to be the machine's.
 */
export function cpuWaitBetween(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): number {
  return Math.max(0, ...[...after].map(([tid, waited]) => waited - (before.get(tid) ?? waited)));
}
