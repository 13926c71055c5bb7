// Runs documented shell commands one at a time in bash, as a reader would in
// one terminal: each command's text is run verbatim, and variables it
// exports (`export NAME=...`) are kept for the commands after it. A command
// that never ends by itself (`kubectl get -w`) runs until its output shows
// what the caller waits for, then its process group is stopped, as Ctrl-C
// would.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Stop the command (process group, SIGINT) once its stdout satisfies this. */
  until?: (stdout: string) => boolean;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const EXPORT = /^export\s+([A-Za-z_][A-Za-z0-9_]*)=/;

export class DocShell {
  readonly #env: NodeJS.ProcessEnv;

  constructor(
    readonly cwd: string,
    env: NodeJS.ProcessEnv,
  ) {
    this.#env = { ...env };
  }

  /** The value a variable has for the next command. */
  variable(name: string): string | undefined {
    return this.#env[name];
  }

  async run(text: string, options: RunOptions = {}): Promise<ShellResult> {
    const exported = EXPORT.exec(text)?.[1];
    const valueFile = path.join(this.cwd, '.exported-value');
    // The text first, unchanged; then, for an export, its value for the next commands.
    const script = exported === undefined ? text : `${text}\n__rc=$?\nprintf '%s' "$${exported}" > '${valueFile}'\nexit $__rc`;
    const result = await runBash(script, this.cwd, this.#env, options);
    if (exported !== undefined && result.code === 0) {
      this.#env[exported] = await fs.readFile(valueFile, 'utf8');
      await fs.rm(valueFile);
    }
    return result;
  }
}

function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv, options: RunOptions): Promise<ShellResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    // Its own process group, so stopping it also stops what it started (kubectl).
    const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let stopped: string | undefined;
    const stop = (why: string, signal: NodeJS.Signals): void => {
      if (stopped !== undefined || child.pid === undefined) return;
      stopped = why;
      try {
        process.kill(-child.pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    };
    const timer = setTimeout(() => {
      stop(`timed out after ${timeoutMs} ms`, 'SIGKILL');
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (options.until?.(stdout) === true) stop('until', 'SIGINT');
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (stopped !== undefined && stopped !== 'until') stderr += `\n(${stopped})`;
      // Stopped once the output was there: the reader's Ctrl-C, a success.
      resolve({ code: stopped === 'until' ? 0 : (code ?? 128), stdout, stderr });
    });
  });
}
