// Closed-loop load: `concurrency` workers each send a request, wait for the
// whole answer, and send the next, for a fixed time after a warm-up. CPU is
// read from /proc/<pid>/stat (utime + stime, all threads) of kube-apiserver
// and etcd (the control plane), of hostclaim-apiserver, and of this process,
// before and after the measured window, and divided by the requests answered
// in it. Other helpers' processes do not show up in these counters, which is
// why CPU per request is the figure that survives a shared machine best.
import { readFile } from 'node:fs/promises';
import { cpuSeconds } from '../controlplane/apiserver-load.js';

export interface CpuProcesses {
  /** kube-apiserver and etcd. */
  readonly controlPlane: readonly number[];
  /** hostclaim-apiserver. */
  readonly server: number;
}

export interface Run {
  readonly requests: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly seconds: number;
  readonly throughput: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly controlPlaneCpuMsPerRequest: number;
  readonly serverCpuMsPerRequest: number;
  readonly clientCpuMsPerRequest: number;
}

export interface LoadOptions {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

/** One request; resolves when the whole answer was read, throws on an error answer. */
export type Operation = (sequence: number) => Promise<void>;

export async function runLoad(operation: Operation, options: LoadOptions, processes: CpuProcesses): Promise<Run> {
  await loop(operation, options.concurrency, options.warmupMs);
  const cpuBefore = await cpuSnapshot(processes);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const result = await loop(operation, options.concurrency, options.durationMs);
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const cpuAfter = await cpuSnapshot(processes);
  const answered = Math.max(result.latencies.length, 1);
  const sorted = result.latencies.sort((a, b) => a - b);
  return {
    requests: result.latencies.length,
    errors: result.errors,
    ...(result.firstError === undefined ? {} : { firstError: result.firstError }),
    seconds,
    throughput: result.latencies.length / seconds,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    controlPlaneCpuMsPerRequest: ((cpuAfter.controlPlane - cpuBefore.controlPlane) * 1000) / answered,
    serverCpuMsPerRequest: ((cpuAfter.server - cpuBefore.server) * 1000) / answered,
    clientCpuMsPerRequest: (client.user + client.system) / 1000 / answered,
  };
}

interface LoopResult {
  latencies: number[];
  errors: number;
  firstError?: string;
}

/** Workers start requests until `durationMs` has passed; requests in flight then are waited for and counted. */
async function loop(operation: Operation, concurrency: number, durationMs: number): Promise<LoopResult> {
  const deadline = performance.now() + durationMs;
  const result: LoopResult = { latencies: [], errors: 0 };
  let sequence = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const start = performance.now();
      try {
        await operation(sequence++);
        result.latencies.push(performance.now() - start);
      } catch (error) {
        result.errors += 1;
        result.firstError ??= String(error).slice(0, 300);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return result;
}

export function percentile(sorted: readonly number[], quantile: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1)] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

export async function cpuSnapshot(processes: CpuProcesses): Promise<{ controlPlane: number; server: number }> {
  const controlPlane = await Promise.all(processes.controlPlane.map(cpuSeconds));
  return { controlPlane: controlPlane.reduce((sum, seconds) => sum + seconds, 0), server: await cpuSeconds(processes.server) };
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): Promise<number> {
  return statusBytes(pid, 'VmRSS');
}

/** A memory field of /proc/<pid>/status in bytes: VmRSS now, VmHWM the most it ever was. */
export async function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
  if (match === null) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]) * 1024;
}
