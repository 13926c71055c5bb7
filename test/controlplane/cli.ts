// Development environment CLI (used by the Makefile):
//   dev   start everything in the foreground; Ctrl-C stops it
//   up    start `dev` in the background; returns once the APIService is Available
//         and the sample BareMetalHosts are available
//   down  stop what `up` started
// Run with the project's Node 24, e.g. `tsx test/controlplane/cli.ts up`.
// Kubeconfigs, certificates and cluster data are removed on stop; logs stay
// in <work-dir>/logs for post-mortems.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BMO_DIR_ENV, createSampleInventory, resolveBareMetalOperator } from './baremetal-operator.js';
import { BIN_DIR_ENV, resolveControlPlaneBinaries } from './binaries.js';
import { startDevEnvironment, TENANTS, type DevEnvironment } from './environment.js';
import { repoPath } from './paths.js';
import { isProcessGone, onProcessExit } from './processes.js';
import { delay, pollUntil } from './wait.js';

const cliPath = fileURLToPath(import.meta.url);
const USAGE = `usage: cli.ts <dev|up|down> [--work-dir DIR] [--server-entry FILE] [--no-quickstart]
  --work-dir      where kubeconfigs, data and logs go (default: .dev in the repository)
  --server-entry  hostclaim-apiserver entry point (default: dist/src/main.js)
  --no-quickstart do not print the quickstart (dev only)`;
const UP_TIMEOUT_MS = 10 * 60_000;
const HOSTS_AVAILABLE_TIMEOUT_MS = 120_000;
const DOWN_GRACE_MS = 60_000;
const DOWN_FORCE_MS = 10_000;
const DUPLICATE_SIGNAL_WINDOW_MS = 1_000;

interface Flags {
  workDir: string;
  serverEntry: string;
  quickstart: boolean;
}

/** What a running `dev` publishes in <work-dir>/ready for `up` and for people. */
interface ReadyInfo {
  pid: number;
  kubeApiserver: string;
  hostclaimApiserver: string;
  binDir: string;
  adminKubeconfig: string;
  tenantKubeconfigs: Record<string, string>;
  logDir: string;
}

function parseFlags(args: string[]): { command: string | undefined; flags: Flags } {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'work-dir': { type: 'string', default: repoPath('.dev') },
      'server-entry': { type: 'string', default: 'dist/src/main.js' },
      'no-quickstart': { type: 'boolean', default: false },
    },
  });
  return {
    command: positionals[0],
    flags: {
      workDir: path.resolve(values['work-dir']),
      serverEntry: path.resolve(repoPath(), values['server-entry']),
      quickstart: !values['no-quickstart'],
    },
  };
}

const devPaths = (workDir: string): { pid: string; ready: string; logDir: string; devLog: string } => ({
  pid: path.join(workDir, 'pid'),
  ready: path.join(workDir, 'ready'),
  logDir: path.join(workDir, 'logs'),
  devLog: path.join(workDir, 'logs', 'dev.log'),
});

// --- dev ---------------------------------------------------------------------

async function dev(flags: Flags): Promise<void> {
  assertServerEntryExists(flags.serverEntry);
  const { ready } = devPaths(flags.workDir);
  const termination = terminationRequested();
  const environment = await startDevEnvironment({
    workDir: flags.workDir,
    serverEntry: flags.serverEntry,
    keepLogs: true,
    bareMetalOperator: true,
    log: (line) => {
      console.error(`[dev] ${line}`);
    },
  });
  await createSampleInventory(environment.controlPlane, 'infra', TENANTS, HOSTS_AVAILABLE_TIMEOUT_MS);
  console.error('[dev] sample hosts infra/host-0..host-2 are available');
  const info = readyInfo(environment);
  await fsp.writeFile(ready, JSON.stringify(info, null, 2));
  if (flags.quickstart) console.log(quickstart(info, 'Ctrl-C'));
  await termination;
  console.error('[dev] stopping...');
  await fsp.rm(ready, { force: true });
  await environment.stop();
  console.error(`[dev] stopped; logs kept in ${info.logDir}`);
}

/**
 * Resolves on the first SIGINT/SIGTERM (listened to from the start, so a
 * signal during startup stops everything once startup finishes). A repeat
 * more than a second later exits at once (the exit handlers then kill every
 * child); quicker repeats are the same Ctrl-C delivered twice, to the
 * terminal's process group and relayed by a wrapper such as tsx.
 */
function terminationRequested(): Promise<void> {
  return new Promise((resolve) => {
    let firstSignalAt: number | undefined;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (firstSignalAt === undefined) {
        firstSignalAt = Date.now();
        resolve();
      } else if (Date.now() - firstSignalAt > DUPLICATE_SIGNAL_WINDOW_MS) {
        console.error(`[dev] ${signal} again: exiting now`);
        process.exit(130);
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

function readyInfo(environment: DevEnvironment): ReadyInfo {
  return {
    pid: process.pid,
    kubeApiserver: environment.controlPlane.server,
    hostclaimApiserver: environment.serverUrl,
    binDir: environment.controlPlane.binaries.dir,
    adminKubeconfig: environment.adminKubeconfigPath,
    tenantKubeconfigs: { ...environment.tenantKubeconfigPaths },
    logDir: environment.logDir,
  };
}

function quickstart(info: ReadyInfo, stopHint: string): string {
  const tenantLines = TENANTS.map(
    (tenant) => `  kubectl --kubeconfig ${info.tenantKubeconfigs[tenant] ?? ''} get hostclaims   # as ${tenant}, in namespace ${tenant}`,
  );
  return [
    '',
    'hostclaim-apiserver development environment is running.',
    '',
    `  export KUBECONFIG=${info.adminKubeconfig}   # cluster admin (system:masters)`,
    `  export PATH=${info.binDir}:$PATH   # the kubectl built with the control plane`,
    '  kubectl get apiservice v1alpha1.tenancy.metal3.io',
    '  kubectl api-resources --api-group=tenancy.metal3.io',
    '  kubectl -n infra get baremetalhosts,hostdeploypolicies   # fixture hosts of metal3 baremetal-operator',
    ...tenantLines,
    '',
    `kube-apiserver:      ${info.kubeApiserver}`,
    `hostclaim-apiserver: ${info.hostclaimApiserver}`,
    `logs:                ${info.logDir}/{etcd,kube-apiserver,kube-controller-manager,baremetal-operator,hostclaim-apiserver}.log`,
    `stop:                ${stopHint}`,
    '',
  ].join('\n');
}

function assertServerEntryExists(serverEntry: string): void {
  if (!fs.existsSync(serverEntry)) throw new Error(`server entry ${serverEntry} does not exist; build the server first`);
}

// --- up ----------------------------------------------------------------------

async function up(flags: Flags): Promise<void> {
  const paths = devPaths(flags.workDir);
  const running = runningDevPid(paths.pid);
  if (running !== undefined) throw new Error(`already running (pid ${running}); run down first`);
  assertServerEntryExists(flags.serverEntry);
  await fsp.rm(paths.ready, { force: true });
  await fsp.mkdir(paths.logDir, { recursive: true });
  // Build (or find) the binaries here, so build progress shows in this terminal.
  const { dir: binDir } = await resolveControlPlaneBinaries();
  const { dir: bmoDir } = await resolveBareMetalOperator();

  const { child, pid } = spawnDetachedDev(flags, { [BIN_DIR_ENV]: binDir, [BMO_DIR_ENV]: bmoDir }, paths.devLog);
  await fsp.writeFile(paths.pid, `${pid}\n`);
  // If `up` itself is interrupted while waiting, do not leave a half-started environment behind.
  const disposeCleanup = onProcessExit(() => {
    signalDev(pid, 'SIGTERM');
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  try {
    await pollUntil(
      'the development environment to become ready',
      () => {
        if (exited) throw new Error('the development environment failed to start');
        return Promise.resolve(fs.existsSync(paths.ready) ? true : undefined);
      },
      { timeoutMs: UP_TIMEOUT_MS, intervalMs: 500 },
    );
  } catch (error) {
    signalDev(pid, 'SIGTERM');
    await fsp.rm(paths.pid, { force: true });
    throw new Error(`${(error as Error).message}\n${logTail(paths.devLog)}`, { cause: error });
  } finally {
    disposeCleanup();
  }
  child.unref();
  const info = JSON.parse(await fsp.readFile(paths.ready, 'utf8')) as ReadyInfo;
  console.log(quickstart(info, 'make down (cli.ts down)'));
}

function spawnDetachedDev(flags: Flags, buildDirs: Record<string, string>, logFile: string): { child: ChildProcess; pid: number } {
  const log = fs.openSync(logFile, 'w');
  try {
    const child = spawn(
      process.execPath,
      // execArgv carries the TypeScript loader (tsx) this CLI runs under.
      [...process.execArgv, cliPath, 'dev', '--no-quickstart', '--work-dir', flags.workDir, '--server-entry', flags.serverEntry],
      { detached: true, stdio: ['ignore', log, log], env: { ...process.env, ...buildDirs } },
    );
    if (child.pid === undefined) throw new Error('cannot start the development environment');
    return { child, pid: child.pid };
  } finally {
    fs.closeSync(log);
  }
}

// --- down --------------------------------------------------------------------

async function down(flags: Flags): Promise<void> {
  const paths = devPaths(flags.workDir);
  const pid = runningDevPid(paths.pid);
  if (pid === undefined) {
    console.log('not running');
  } else {
    await stopDev(pid);
    console.log(`stopped; logs kept in ${paths.logDir}`);
  }
  await fsp.rm(paths.pid, { force: true });
  await fsp.rm(paths.ready, { force: true });
}

/** SIGTERM (graceful stop), then a second SIGTERM (dev exits and kills its children), then SIGKILL. */
async function stopDev(pid: number): Promise<void> {
  for (const [signal, waitMs] of [
    ['SIGTERM', DOWN_GRACE_MS],
    ['SIGTERM', DOWN_FORCE_MS],
    ['SIGKILL', DOWN_FORCE_MS],
  ] as const) {
    signalDev(pid, signal);
    if (await exitsWithin(pid, waitMs)) return;
  }
  throw new Error(`pid ${pid} did not exit`);
}

async function exitsWithin(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (isProcessGone(pid)) return true;
    await delay(200);
  }
  return isProcessGone(pid);
}

function signalDev(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The pid in the pid file if it is a live `cli.ts dev` process (guards against pid reuse). */
function runningDevPid(pidFile: string): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8'), 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || isProcessGone(pid)) return undefined;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(cliPath) ? pid : undefined;
  } catch {
    return pid; // no /proc: trust the pid file
  }
}

function logTail(file: string, lines = 60): string {
  try {
    const tail = fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    return `--- last ${lines} lines of ${file} ---\n${tail}`;
  } catch {
    return `(no log at ${file})`;
  }
}

// --- main --------------------------------------------------------------------

const commands: Record<string, (flags: Flags) => Promise<void>> = { dev, up, down };

async function main(): Promise<void> {
  const { command, flags } = parseFlags(process.argv.slice(2));
  const run = command === undefined ? undefined : commands[command];
  if (run === undefined) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  await run(flags);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
