/**
 * Runs one of the test Go programs (test/goclient) that print a JSON summary
 * as their last stdout line, and keeps everything they said for failures.
 */
import { spawn } from 'node:child_process';

export interface GoProgramRun<Summary> {
  code: number | null;
  stdout: string;
  stderr: string;
  summary: Summary | undefined;
}

/** Spawns `binary args` with `env`, killed after `timeoutMs`; resolves when it exits. */
export function runGoProgram<Summary>(binary: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<GoProgramRun<Summary>> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      let summary: Summary | undefined;
      try {
        summary = JSON.parse(last) as Summary;
      } catch {
        summary = undefined;
      }
      resolve({ code, stdout, stderr, summary });
    });
  });
}

/** The summary of a run, or a failure that shows everything the program said. */
export function summaryOf<Summary>(name: string, run: GoProgramRun<Summary>): Summary {
  if (run.summary === undefined) {
    throw new Error(`${name} printed no JSON summary (exit ${run.code ?? 'killed'})\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  }
  return run.summary;
}
