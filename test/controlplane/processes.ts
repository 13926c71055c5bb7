// Child processes of the harness: each runs in its own process group (so it
// and anything it forks are signalled together, and a terminal's Ctrl-C does
// not reach it before the harness stops things in order), logs to a file, and
// is SIGKILLed if the harness process dies without stopping it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export interface ProcessSpec {
  name: string;
  command: string;
  args: readonly string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** Keep earlier output (e.g. across restarts) instead of truncating the log. */
  appendToLog?: boolean;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const DEFAULT_STOP_TIMEOUT_MS = 15_000;

export class ManagedProcess {
  readonly exited: Promise<ExitStatus>;
  #exitStatus: ExitStatus | undefined;

  constructor(
    readonly name: string,
    readonly pid: number,
    readonly logFile: string,
    exited: Promise<ExitStatus>,
  ) {
    const disposeExitCleanup = onProcessExit(() => {
      this.#signalGroup('SIGKILL');
    });
    this.exited = exited.then((status) => {
      this.#exitStatus = status;
      disposeExitCleanup();
      return status;
    });
  }

  get running(): boolean {
    return this.#exitStatus === undefined;
  }

  /** SIGTERM the process group, SIGKILL it if it has not exited within `timeoutMs`. Idempotent. */
  async stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<ExitStatus> {
    if (!this.running) return this.exited;
    this.#signalGroup('SIGTERM');
    // A paused process only acts on SIGTERM once continued.
    this.#signalGroup('SIGCONT');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        resolve('timeout');
      }, timeoutMs);
    });
    const outcome = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.#signalGroup('SIGKILL');
    return this.exited;
  }

  /**
   * SIGSTOP the process group: it keeps its sockets open and answers nothing
   * (a hung dependency, not a dead one). resume() sends SIGCONT.
   */
  pause(): void {
    this.#signalGroup('SIGSTOP');
  }

  resume(): void {
    this.#signalGroup('SIGCONT');
  }

  /** Throws, with the end of the log, if the process is no longer running. */
  assertRunning(): void {
    if (this.#exitStatus === undefined) return;
    const { code, signal } = this.#exitStatus;
    throw new Error(`${this.name} exited (code ${code ?? '-'}, signal ${signal ?? '-'})\n${this.logTail()}`);
  }

  logTail(lines = 40): string {
    let text: string;
    try {
      text = fs.readFileSync(this.logFile, 'utf8');
    } catch {
      return `(no log at ${this.logFile})`;
    }
    const tail = text.trimEnd().split('\n').slice(-lines).join('\n');
    return `--- last ${lines} lines of ${this.logFile} ---\n${tail}`;
  }

  #signalGroup(signal: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(-this.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

export async function startProcess(spec: ProcessSpec): Promise<ManagedProcess> {
  const logFd = fs.openSync(spec.logFile, spec.appendToLog ? 'a' : 'w');
  try {
    const child = spawn(spec.command, spec.args, {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: spec.env ?? process.env,
    });
    const exited = new Promise<ExitStatus>((resolve) => {
      child.once('exit', (code, signal) => {
        resolve({ code, signal });
      });
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) => {
        reject(new Error(`cannot start ${spec.name} (${spec.command}): ${error.message}`));
      });
    });
    return new ManagedProcess(spec.name, child.pid!, spec.logFile, exited);
  } finally {
    fs.closeSync(logFd);
  }
}

/**
 * True once `pid` no longer runs. A zombie counts as gone: processes orphaned
 * by a dead parent wait for init to reap them, which not every container's
 * init does promptly.
 */
export function isProcessGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    // Without /proc (not Linux) kill() is all we know; with it, the process just went away.
    return fs.existsSync('/proc/self/stat');
  }
}

// --- cleanup when the harness process itself goes away -----------------------

type Cleanup = () => void;
const exitCleanups = new Set<Cleanup>();
const fatalSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let exitHandlersInstalled = false;

/**
 * Registers a synchronous cleanup for when the harness exits or is killed by a
 * signal without having stopped what it started. Cleanups run newest first
 * (processes registered after their data directory die before it is removed).
 * Returns a function that unregisters the cleanup.
 */
export function onProcessExit(cleanup: Cleanup): () => void {
  installExitHandlers();
  exitCleanups.add(cleanup);
  return () => exitCleanups.delete(cleanup);
}

function runExitCleanups(): void {
  for (const cleanup of [...exitCleanups].reverse()) {
    exitCleanups.delete(cleanup);
    try {
      cleanup();
    } catch {
      // Best effort: the harness is going away; keep cleaning up the rest.
    }
  }
}

function installExitHandlers(): void {
  if (exitHandlersInstalled) return;
  exitHandlersInstalled = true;
  process.on('exit', runExitCleanups);
  for (const signal of fatalSignals) {
    const handler = (): void => {
      // If the application listens too (e.g. the dev CLI), it owns shutdown and
      // stops things gracefully; otherwise behave like the default action.
      if (process.listenerCount(signal) > 1) return;
      runExitCleanups();
      process.removeListener(signal, handler);
      process.kill(process.pid, signal);
    };
    process.on(signal, handler);
  }
}
