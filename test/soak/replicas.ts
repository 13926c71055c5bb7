// The soak's two replicas of hostclaim-apiserver: `aggregated` (the
// environment's server, behind the APIService) and `direct` (a second
// process, reached on its own port), which one holds the binder's Lease,
// SIGKILL of the leader and its restart, and their RSS.
import { readFile } from 'node:fs/promises';
import type { DevEnvironment } from '../controlplane/environment.js';
import type { ManagedProcess } from '../controlplane/processes.js';
import type { H2Client } from '../bench/h2.js';
import { rssMiB } from '../support/slow-client.js';

export type ReplicaName = 'aggregated' | 'direct';
export const REPLICAS: readonly ReplicaName[] = ['aggregated', 'direct'];

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/hostclaim-system/leases/hostclaim-binder';

export interface Kill {
  readonly atSeconds: number;
  readonly replica: ReplicaName;
  readonly killedPid: number;
  readonly newPid: number;
  /** From the SIGKILL until the new process served (/readyz, and for `aggregated` the APIService Available). */
  readonly backAfterSeconds: number;
}

export interface RssSample {
  readonly atSeconds: number;
  readonly replica: ReplicaName;
  readonly pid: number;
  readonly rssMiB: number;
  /** V8's heap in use (nodejs_heap_size_used_bytes of the replica's /metrics), garbage not yet collected included. */
  readonly heapUsedMiB: number | undefined;
  /** V8's heap as committed from the system (nodejs_heap_size_total_bytes): what the used heap leaves in RSS. */
  readonly heapTotalMiB: number | undefined;
  /** Memory of JavaScript objects held outside the heap, Buffers included (nodejs_external_memory_bytes). */
  readonly externalMiB: number | undefined;
}

export class Replicas {
  #direct: ManagedProcess | undefined;
  /** When each process started (ms, performance.now()). */
  readonly startedAt = new Map<number, number>();

  constructor(
    private readonly env: DevEnvironment,
    private readonly admin: H2Client,
    private readonly origin: number,
  ) {}

  async start(): Promise<void> {
    this.startedAt.set(this.pid('aggregated'), performance.now());
    this.#direct = await this.env.startReplica();
    this.startedAt.set(this.#direct.pid, performance.now());
  }

  /** The direct replica's URL (a restarted one listens on a new port). */
  directUrl(): string {
    const url = this.env.replicaUrls.at(-1);
    if (url === undefined) throw new Error('no direct replica');
    return url;
  }

  pid(replica: ReplicaName): number {
    const process = replica === 'aggregated' ? this.env.serverProcess : this.#direct;
    if (process === undefined || !process.running) throw new Error(`replica ${replica} is not running`);
    return process.pid;
  }

  /** Which replica holds the binder's Lease: the one whose log says it became leader under the Lease's holder identity. */
  async leader(): Promise<ReplicaName | undefined> {
    const lease = await this.admin.json<{ spec: { holderIdentity?: string } }>({ path: LEASE });
    const holder = lease.spec.holderIdentity ?? '';
    if (holder === '') return undefined;
    for (const replica of REPLICAS) {
      const logFile = replica === 'aggregated' ? this.env.serverLogPath : this.#direct?.logFile;
      if (logFile !== undefined && (await readFile(logFile, 'utf8')).includes(`"identity":"${holder}"`)) return replica;
    }
    return undefined;
  }

  /** SIGKILLs the replica's process group and starts it again; resolves once it serves. */
  async killAndRestart(replica: ReplicaName): Promise<Omit<Kill, 'atSeconds' | 'replica'>> {
    const killedPid = this.pid(replica);
    const started = performance.now();
    if (replica === 'aggregated') {
      await this.env.restartServer({ kill: true });
    } else {
      process.kill(-killedPid, 'SIGKILL');
      await this.#direct?.exited;
      this.#direct = await this.env.startReplica();
    }
    const newPid = this.pid(replica);
    this.startedAt.set(newPid, performance.now());
    return { killedPid, newPid, backAfterSeconds: (performance.now() - started) / 1000 };
  }

  /** `metrics(replica)`: the replica's /metrics text. */
  async sample(metrics: (replica: ReplicaName) => Promise<string>): Promise<RssSample[]> {
    const atSeconds = Math.round((performance.now() - this.origin) / 1000);
    const samples: RssSample[] = [];
    for (const replica of REPLICAS) {
      try {
        const pid = this.pid(replica);
        const text = await metrics(replica).catch(() => '');
        const figure = (name: string): number | undefined => {
          const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
          return value === undefined ? undefined : Math.round(Number(value) / 2 ** 20);
        };
        samples.push({
          atSeconds,
          replica,
          pid,
          rssMiB: Math.round(await rssMiB(pid)),
          heapUsedMiB: figure('nodejs_heap_size_used_bytes'),
          heapTotalMiB: figure('nodejs_heap_size_total_bytes'),
          externalMiB: figure('nodejs_external_memory_bytes'),
        });
      } catch {
        // Being restarted: no sample this time.
      }
    }
    return samples;
  }
}

export interface RssGrowth {
  readonly replica: ReplicaName;
  readonly pid: number;
  /** Samples after warm-up. */
  readonly samples: number;
  readonly baselineMiB: number;
  readonly finalMiB: number;
  readonly growth: number;
}

/**
 * RSS growth of each process after its warm-up: the median of its last
 * quarter of samples over the median of its first quarter after warm-up (at
 * least three samples each: RSS goes up and down by tens of MiB as V8 and
 * the allocator take and return memory). A process with fewer than six
 * samples after warm-up is not judged.
 */
export function rssGrowth(samples: readonly RssSample[], startedAtSeconds: ReadonlyMap<number, number>, warmupSeconds: number): RssGrowth[] {
  const byPid = new Map<number, RssSample[]>();
  for (const sample of samples) {
    const start = startedAtSeconds.get(sample.pid) ?? 0;
    if (sample.atSeconds < start + warmupSeconds) continue;
    byPid.set(sample.pid, [...(byPid.get(sample.pid) ?? []), sample]);
  }
  const median = (values: RssSample[]): number => {
    const sorted = values.map((sample) => sample.rssMiB).sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  };
  return [...byPid.entries()]
    .filter(([, list]) => list.length >= 6)
    .map(([pid, list]) => {
      const window = Math.max(3, Math.floor(list.length / 4));
      const baselineMiB = median(list.slice(0, window));
      const finalMiB = median(list.slice(-window));
      return { replica: list[0]?.replica ?? 'aggregated', pid, samples: list.length, baselineMiB, finalMiB, growth: finalMiB / baselineMiB - 1 };
    });
}
