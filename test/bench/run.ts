// One benchmark run against a running environment (control plane with
// baremetal-operator's CRDs, hostclaim-apiserver behind the aggregator):
// builds the scenario, measures every figure of issue #12 for us and for
// kube-apiserver serving the backing resource, and returns the results with
// each done-criterion judged. Used by `make bench` (cli.ts) and by the smoke
// test in `make test` (test/integration/bench-smoke.test.ts).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DevEnvironment } from '../controlplane/environment.js';
import { SERVICE_DNS_NAME } from '../controlplane/environment.js';
import { cpuSeconds } from '../controlplane/apiserver-load.js';
import { isHealthy } from '../controlplane/http.js';
import { repoPath } from '../controlplane/paths.js';
import { credentialsOf } from '../support/raw-http.js';
import { bindScopedUser, runScopedList, SCOPED_USER, type ScopedListComparison } from './scoped-list.js';
import { runBinding, type BindingResult } from './binding.js';
import type { BenchConfig } from './config.js';
import { judge, type Criterion } from './criteria.js';
import { H2Client, type TlsIdentity } from './h2.js';
import { cpuSnapshot, type CpuProcesses } from './load.js';
import { describeRss, settledRss, settleOptions, type RssFigure } from './rss.js';
import { hardwareDataPagination, runReads, type Comparison, type Pagination, type ReadKey } from './reads.js';
import { buildScenario, TENANT_USER, type SetupHooks, type SetupTimes } from './scenario.js';
import { medianWatch, runWatchFanOut, watchSessions, type WatchComparison, type WatchRun, type WatchSide } from './watch.js';

export const RESULTS_SCHEMA = 'hostclaim-apiserver-bench/3';

export interface Machine {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGb: number;
  /** 1, 5 and 15 minute load averages just before the run started, and when it ended. */
  readonly loadAverageBefore: number[];
  readonly loadAverageAfter: number[];
  /** Processes of other environments on the machine when the run started (other helpers' control planes and servers). */
  readonly otherProcesses: { kubeApiservers: number; etcds: number; nodes: number };
  readonly node: string;
}

export interface Footprint {
  /** hostclaim-apiserver's RSS once the scenario was built: a few seconds after, settled, and its peak (rss.ts). */
  readonly rssAfterSetup: RssFigure;
  /** From starting a stopped server until its /readyz answers 200, at the full scenario. */
  readonly readySecondsAfterRestart: number;
  /** The same after a restart, counted from /readyz. */
  readonly rssAfterRestart: RssFigure;
  /**
   * CPU the control plane and the server spend per second with no client
   * request at all (informers, the binder, leader election), over the last
   * 5 s before the first phase: it is inside every phase's CPU-per-request
   * figure on both sides.
   */
  readonly idleCpuMsPerSecond: { readonly controlPlane: number; readonly server: number };
  /** How long after setup the control plane took to become quiet (the binder finishing claim statuses). */
  readonly quiesceSeconds: number;
}

export interface BenchResults {
  readonly schema: typeof RESULTS_SCHEMA;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly commit: string;
  readonly machine: Machine;
  readonly config: BenchConfig;
  readonly setup: SetupTimes;
  readonly reads: Record<ReadKey, Comparison>;
  /** Issue #9: a cluster-wide LIST by a user with 3 of the namespaces vs a single-namespace LIST. */
  readonly scopedList: ScopedListComparison;
  readonly hardwareDataPagination: Pagination;
  readonly watch: WatchComparison;
  readonly binding: BindingResult;
  readonly footprint: Footprint;
  /** The replicas beside the measured server (config.peerReplicas), and the CPU they spent during the read phases (answering its watermark rounds, and their own informers). */
  readonly peers: { readonly count: number; readonly cpuSecondsDuringReads: number };
  readonly criteria: Criterion[];
}

const SETTLE_MS = 5000;

/** `BENCH_PHASES=binding`: the scenario, then only the binding figure (to work on the binder without the ~30 min of the other phases). */
export interface BindingOnlyResults {
  readonly config: BenchConfig;
  readonly loadAverageBefore: number[];
  readonly loadAverageAfter: number[];
  readonly setup: SetupTimes;
  readonly binding: BindingResult;
  /** CPU seconds over the whole binding phase (the creates included), to compare the binder's cost across changes. */
  readonly bindingCpuSeconds: { readonly controlPlane: number; readonly server: number };
}

export async function runBindingOnly(env: DevEnvironment, config: BenchConfig, log: (line: string) => void): Promise<BindingOnlyResults> {
  const loadAverageBefore = os.loadavg();
  const admin = new H2Client(env.controlPlane.server, await credentialsOf(env.adminKubeconfigPath), 2);
  const tenantKubeconfig = await env.controlPlane.userKubeconfig(TENANT_USER, [], path.join(env.workDir, 'bench-tenant.kubeconfig'));
  const tenant = new H2Client(env.controlPlane.server, await credentialsOf(tenantKubeconfig), 2);
  try {
    const setup = await buildScenario(config, { admin, tenant }, setupHooks(env), log);
    // As in the full run, binding starts on a quiet cluster (there, after the read phases).
    const processes: CpuProcesses = { controlPlane: controlPlanePids(env), server: serverPid(env) };
    await quiesce(processes, log);
    const before = await cpuSnapshot(processes);
    const binding = await runBinding(config, { tenant, admin }, log);
    const after = await cpuSnapshot(processes);
    const bindingCpuSeconds = { controlPlane: after.controlPlane - before.controlPlane, server: after.server - before.server };
    log(`binding phase (creates included): CPU s: control plane ${bindingCpuSeconds.controlPlane.toFixed(1)}, server ${bindingCpuSeconds.server.toFixed(1)}`);
    return { config, loadAverageBefore, loadAverageAfter: os.loadavg(), setup, binding, bindingCpuSeconds };
  } finally {
    admin.close();
    tenant.close();
    await rm(tenantKubeconfig, { force: true });
  }
}

function setupHooks(env: DevEnvironment): SetupHooks {
  return {
    stopServer: () => env.stopServer(),
    startServer: () => env.restartServer(),
    cpu: async () => {
      const server = env.serverProcess;
      return {
        controlPlane: (await Promise.all(controlPlanePids(env).map(cpuSeconds))).reduce((sum, seconds) => sum + seconds, 0),
        server: server === undefined ? undefined : { pid: server.pid, seconds: await cpuSeconds(server.pid) },
        client: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
      };
    },
  };
}

export async function runBench(env: DevEnvironment, config: BenchConfig, log: (line: string) => void): Promise<BenchResults> {
  const startedAt = new Date();
  const loadAverageBefore = os.loadavg();
  const otherProcesses = countOtherProcesses();
  const adminIdentity = await credentialsOf(env.adminKubeconfigPath);
  const tenantKubeconfig = await env.controlPlane.userKubeconfig(TENANT_USER, [], path.join(env.workDir, 'bench-tenant.kubeconfig'));
  const tenantIdentity = await credentialsOf(tenantKubeconfig);
  const origin = env.controlPlane.server;
  const admin = new H2Client(origin, adminIdentity, 2);
  const tenant = new H2Client(origin, tenantIdentity, 2);
  const scopedKubeconfig = await env.controlPlane.userKubeconfig(SCOPED_USER, [], path.join(env.workDir, 'bench-scoped.kubeconfig'));
  const processes = (): CpuProcesses => ({ controlPlane: controlPlanePids(env), server: serverPid(env) });
  try {
    const setup = await buildScenario(config, { admin, tenant }, setupHooks(env), log);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const rssAfterSetup = await settledRss(serverPid(env), settleOptions(config.rssSettleSeconds));
    log(`hostclaim-apiserver RSS after setup: ${describeRss(rssAfterSetup)}`);
    const peerPids = await startPeerReplicas(env, config, log);
    const { idleCpuMsPerSecond, quiesceSeconds } = await quiesce(processes(), log);

    // Watches first: the RSS they add is read before the large lists of the read phases have grown the heap.
    const watch = await watchComparison(env, config, { tenant: tenantIdentity, admin: adminIdentity }, log);
    const peerCpuBefore = await totalCpuSeconds(peerPids);
    const reads = await runReads(config, { tenant, admin }, processes, log);
    const peers = { count: peerPids.length, cpuSecondsDuringReads: (await totalCpuSeconds(peerPids)) - peerCpuBefore };
    if (peers.count > 0) log(`peer replicas: ${peers.count}, CPU during the read phases ${peers.cpuSecondsDuringReads.toFixed(1)} s`);
    await bindScopedUser(config, admin);
    const scopedList = await runScopedList(config, origin, await credentialsOf(scopedKubeconfig), processes, log);
    const binding = await runBinding(config, { tenant, admin }, log);
    const pagination = await hardwareDataPagination(config, admin);
    log(`cluster-wide HardwareData LIST limit=${config.pageLimit}: ${JSON.stringify(pagination)}`);
    const footprint = { rssAfterSetup, idleCpuMsPerSecond, quiesceSeconds, ...(await restartFootprint(env, config, log)) };

    const partial = {
      schema: RESULTS_SCHEMA,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      commit: commit(),
      machine: { cpuModel: cpuModel(), cores: os.availableParallelism(), memoryGb: os.totalmem() / 1e9, loadAverageBefore, loadAverageAfter: os.loadavg(), otherProcesses, node: process.version },
      config,
      setup,
      reads,
      scopedList,
      hardwareDataPagination: pagination,
      watch,
      binding,
      footprint,
      peers,
    } as const;
    return { ...partial, criteria: judge(partial) };
  } finally {
    admin.close();
    tenant.close();
    // Not one of the environment's files: it would outlive env.stop().
    await rm(tenantKubeconfig, { force: true });
    await rm(scopedKubeconfig, { force: true });
  }
}

async function watchComparison(
  env: DevEnvironment,
  config: BenchConfig,
  identities: { tenant: TlsIdentity; admin: TlsIdentity },
  log: (line: string) => void,
): Promise<WatchComparison> {
  const origin = env.controlPlane.server;
  const runs: { us: WatchRun[]; direct: WatchRun[] } = { us: [], direct: [] };
  for (let repetition = 0; repetition < config.repetitions; repetition++) {
    for (const name of repetition % 2 === 0 ? (['us', 'direct'] as const) : (['direct', 'us'] as const)) {
      const namespacedClient = new H2Client(origin, identities.tenant, watchSessions(config.watchers - config.clusterWideWatchers));
      const clusterClient = new H2Client(origin, identities.admin, watchSessions(config.clusterWideWatchers));
      const writer = new H2Client(origin, identities.tenant, 1);
      const side: WatchSide = {
        name,
        namespacedClient,
        clusterClient,
        writer,
        watchedPid: () => (name === 'us' ? serverPid(env) : kubeApiserverPid(env)),
      };
      try {
        const run = await runWatchFanOut(config, side, `${name[0] ?? ''}${repetition}`);
        runs[name].push(run);
        log(
          `watch ${name} #${repetition + 1}: ${run.watchers} watchers (refused: ${JSON.stringify(run.refusedStatuses)}, 429s retried: ${run.retried}), ${run.delivered}/${run.expected} events, p50 ${run.p50Ms.toFixed(1)} ms, p99 ${run.p99Ms.toFixed(1)} ms, +${run.rssAddedMb.toFixed(1)} MB RSS, established in ${run.establishMs.toFixed(0)} ms`,
        );
      } finally {
        namespacedClient.close();
        clusterClient.close();
        writer.close();
      }
      // Let the closed watches wind down before the next side measures its RSS.
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
  const us = medianWatch(runs.us);
  const direct = medianWatch(runs.direct);
  return { us, direct, ratio: { p50Ms: us.p50Ms / direct.p50Ms, p99Ms: us.p99Ms / direct.p99Ms }, runs };
}

/** Control-plane CPU per second below which the cluster counts as quiet (kube-apiserver idles at ~1 % CPU, docs/status.md). */
const QUIET_CONTROL_PLANE_MS_PER_SECOND = 100;
const QUIESCE_TIMEOUT_MS = 180_000;

/**
 * Waits (5 s windows, up to 3 minutes) until the control plane is quiet, so
 * the phases do not measure setup's aftermath: right after setup the binder
 * is still writing the unbindable claims' statuses, which cost the control
 * plane ~0.5 CPU s per second in a 1,000-claim scenario.
 */
async function quiesce(processes: CpuProcesses, log: (line: string) => void): Promise<Pick<Footprint, 'idleCpuMsPerSecond' | 'quiesceSeconds'>> {
  const started = performance.now();
  for (;;) {
    const idle = await idleCpu(processes);
    const waited = (performance.now() - started) / 1000;
    log(`idle CPU: control plane ${idle.controlPlane.toFixed(0)} ms/s, hostclaim-apiserver ${idle.server.toFixed(0)} ms/s`);
    if (idle.controlPlane <= QUIET_CONTROL_PLANE_MS_PER_SECOND || waited * 1000 >= QUIESCE_TIMEOUT_MS) return { idleCpuMsPerSecond: idle, quiesceSeconds: waited };
  }
}

async function idleCpu(processes: CpuProcesses): Promise<Footprint['idleCpuMsPerSecond']> {
  const before = await cpuSnapshot(processes);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const after = await cpuSnapshot(processes);
  const seconds = (performance.now() - started) / 1000;
  return { controlPlane: ((after.controlPlane - before.controlPlane) * 1000) / seconds, server: ((after.server - before.server) * 1000) / seconds };
}

async function restartFootprint(env: DevEnvironment, config: BenchConfig, log: (line: string) => void): Promise<Omit<Footprint, 'rssAfterSetup' | 'idleCpuMsPerSecond' | 'quiesceSeconds'>> {
  await env.stopServer();
  const started = performance.now();
  const restarted = env.restartServer();
  // Poll /readyz ourselves (every 100 ms), so the figure does not include the APIService availability wait.
  const health = { caPem: env.aggregatedServerCaPem, serverName: SERVICE_DNS_NAME };
  while (!(await isHealthy(`${env.serverUrl}/readyz`, health).catch(() => false))) await new Promise((resolve) => setTimeout(resolve, 100));
  const readySeconds = (performance.now() - started) / 1000;
  await restarted;
  log(`hostclaim-apiserver restarted: /readyz after ${readySeconds.toFixed(2)} s`);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const rssAfterRestart = await settledRss(serverPid(env), settleOptions(config.rssSettleSeconds));
  log(`hostclaim-apiserver RSS after the restart: ${describeRss(rssAfterRestart)}`);
  return { readySecondsAfterRestart: readySeconds, rssAfterRestart };
}

/** config.peerReplicas more replicas, started once the scenario is built (their caches list it at start); their pids. */
async function startPeerReplicas(env: DevEnvironment, config: BenchConfig, log: (line: string) => void): Promise<number[]> {
  const pids: number[] = [];
  for (let i = 0; i < config.peerReplicas; i++) {
    const started = Date.now();
    pids.push((await env.startReplica()).pid);
    log(`peer replica ${i + 1} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return pids;
}

async function totalCpuSeconds(pids: readonly number[]): Promise<number> {
  return (await Promise.all(pids.map(cpuSeconds))).reduce((sum, seconds) => sum + seconds, 0);
}

function serverPid(env: DevEnvironment): number {
  const server = env.serverProcess;
  if (server === undefined) throw new Error('hostclaim-apiserver is not running');
  return server.pid;
}

function kubeApiserverPid(env: DevEnvironment): number {
  return controlPlanePid(env, 'kube-apiserver');
}

function controlPlanePid(env: DevEnvironment, name: string): number {
  const found = env.controlPlane.processes.find((p) => p.name === name);
  if (found === undefined) throw new Error(`the control plane runs no ${name}`);
  return found.pid;
}

function controlPlanePids(env: DevEnvironment): number[] {
  return [controlPlanePid(env, 'kube-apiserver'), controlPlanePid(env, 'etcd')];
}

function cpuModel(): string {
  const line = readFileSync('/proc/cpuinfo', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('model name'));
  return line?.split(':')[1]?.trim() ?? 'unknown';
}

function commit(): string {
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repoPath(), encoding: 'utf8' }).trim();
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') === '' ? '' : '-dirty'}`;
  } catch {
    return 'unknown';
  }
}

/** kube-apiserver, etcd and node processes on the machine besides this run's (from /proc/<pid>/comm). */
function countOtherProcesses(): Machine['otherProcesses'] {
  const counts = { kubeApiservers: 0, etcds: 0, nodes: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm === 'kube-apiserver') counts.kubeApiservers += 1;
    else if (comm === 'etcd') counts.etcds += 1;
    else if (comm === 'node' || comm === 'MainThread') counts.nodes += 1;
  }
  // This run's own kube-apiserver, etcd, server and harness.
  return { kubeApiservers: Math.max(0, counts.kubeApiservers - 1), etcds: Math.max(0, counts.etcds - 1), nodes: Math.max(0, counts.nodes - 2) };
}
