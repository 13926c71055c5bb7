// `npx tsx test/bench/footprint.ts`: only the footprint figures of the
// benchmark (issue #12: "RSS per replica ≤ 300 MB at the full scenario"),
// without the read, watch and binding phases. Builds the scenario (BENCH_*
// sizes as `make bench`, see config.ts), then reports hostclaim-apiserver's
// memory after setup and after a restart: RSS, and how /proc splits it
// (anonymous memory, i.e. the V8 heap and malloc, vs mapped files).
//   BENCH_HOLD=1   keep the environment after the figures: each SIGHUP
//                  restarts hostclaim-apiserver (from dist/, so a rebuilt
//                  server is measured on the same cluster) and reports
//                  again; SIGINT/SIGTERM stop everything.
//   BENCH_PROBE_SIGNAL=SIGWINCH   sent to the server a few seconds before
//                  each report, for a probe preloaded with NODE_OPTIONS
//                  (--require) that logs process.memoryUsage() or writes a
//                  heap snapshot (--heapsnapshot-signal).
// Node flags for the server (e.g. --max-semi-space-size) and malloc's
// settings (MALLOC_ARENA_MAX) go in the environment, which it inherits.
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds } from '../controlplane/apiserver-load.js';
import { resolveControlPlaneBinaries } from '../controlplane/binaries.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { credentialsOf } from '../support/raw-http.js';
import { configFromEnvironment, defaultConfig, smokeConfig } from './config.js';
import { H2Client } from './h2.js';
import { buildScenario, type SetupHooks } from './scenario.js';

const SETTLE_MS = 10_000;
const started = Date.now();
const log = (line: string): void => {
  console.log(`[footprint ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}`);
};
const config = configFromEnvironment(process.env, process.env.BENCH_PRESET === 'smoke' ? smokeConfig : defaultConfig);
log(`settings: ${JSON.stringify(config)}`);

const { dir: binDir } = await resolveControlPlaneBinaries();
const env = await startDevEnvironment({
  workDir: path.join(os.tmpdir(), `footprint-${process.pid}`),
  serverEntry: 'dist/src/main.js',
  binDir,
  bareMetalOperatorCrds: true,
  keepLogs: true,
  log,
});

function serverPid(environment: DevEnvironment): number {
  const server = environment.serverProcess;
  if (server === undefined) throw new Error('hostclaim-apiserver is not running');
  return server.pid;
}

/** VmRSS and its split from /proc/<pid>/status, in MB. */
async function memory(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): string => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
    return match === null ? '?' : (Number(match[1]) / 1024).toFixed(0);
  };
  return `RSS ${field('VmRSS')} MB (anon ${field('RssAnon')}: ${await anonymousSplit(pid)}; file ${field('RssFile')}; peak ${field('VmHWM')}), load ${os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`;
}

/**
 * Where the anonymous memory lies: glibc's main malloc arena (`[heap]`),
 * malloc's per-thread arenas and the rest (mostly V8's
 * heap pages), in MB.
 */
async function anonymousSplit(pid: number): Promise<string> {
  const totals = { brk: 0, arenas: 0, other: 0 };
  let current: keyof typeof totals | undefined;
  for (const line of (await readFile(`/proc/${pid}/smaps`, 'utf8')).split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping !== null) {
      const name = mapping[3] ?? '';
      // A thread arena starts on a 64 MB boundary (glibc's HEAP_MAX_SIZE).
      const arena = BigInt(`0x${mapping[1] ?? '0'}`) % BigInt(64 * 2 ** 20) === 0n;
      current = name === '[heap]' ? 'brk' : name !== '' ? undefined : arena ? 'arenas' : 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB$/.exec(line);
    if (rss !== null && current !== undefined) totals[current] += Number(rss[1]) / 1024;
  }
  return `malloc main arena ${totals.brk.toFixed(0)}, 64 MB arenas ${totals.arenas.toFixed(0)}, other ${totals.other.toFixed(0)}`;
}

async function report(when: string): Promise<void> {
  const probe = process.env.BENCH_PROBE_SIGNAL;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS - (probe === undefined ? 0 : 3000)));
  if (probe !== undefined) {
    process.kill(serverPid(env), probe);
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
  log(`hostclaim-apiserver (pid ${serverPid(env)}) ${when}: ${await memory(serverPid(env))}`);
}

async function restart(): Promise<void> {
  await env.stopServer();
  const restartedAt = performance.now();
  await env.restartServer();
  log(`restarted: ready after ${((performance.now() - restartedAt) / 1000).toFixed(2)} s (with the APIService wait)`);
  await report('after restart');
}

const admin = new H2Client(env.controlPlane.server, await credentialsOf(env.adminKubeconfigPath), 2);
const tenantKubeconfig = await env.controlPlane.userKubeconfig('bench-tenant', [], path.join(env.workDir, 'bench-tenant.kubeconfig'));
const tenant = new H2Client(env.controlPlane.server, await credentialsOf(tenantKubeconfig), 2);
const hooks: SetupHooks = {
  stopServer: () => env.stopServer(),
  startServer: () => env.restartServer(),
  cpu: async () => {
    const server = env.serverProcess;
    return {
      controlPlane: 0,
      server: server === undefined ? undefined : { pid: server.pid, seconds: await cpuSeconds(server.pid) },
      client: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    };
  },
};
try {
  await buildScenario(config, { admin, tenant }, hooks, log);
  await report('after setup');
  await restart();
  if (process.env.BENCH_HOLD !== undefined && process.env.BENCH_HOLD !== '') {
    log(`holding; server log ${env.serverLogPath}; kill -HUP ${process.pid} restarts the server, kill -INT ${process.pid} ends`);
    let queue = Promise.resolve();
    process.on('SIGHUP', () => {
      queue = queue.then(restart).catch((error: unknown) => {
        log(`restart failed: ${String(error)}`);
      });
    });
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  }
} finally {
  admin.close();
  tenant.close();
  await env.stop();
}
