// What the server's watches cost kube-apiserver, read from outside: its log
// (watch events it failed to encode for a watcher) and its own CPU time.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { ControlPlane } from './controlplane.js';
import type { ManagedProcess } from './processes.js';

/** kube-apiserver's messages for a watch whose events it cannot encode in the representation the watcher asked for. */
const WATCH_ENCODING_ERROR = /Failed to encode watch event|you requested PartialObjectMetadata|unable to encode watch object/;

export function kubeApiserverProcess(controlPlane: ControlPlane): ManagedProcess {
  const process = controlPlane.processes.find((p) => p.name === 'kube-apiserver');
  if (process === undefined) throw new Error('the control plane runs no kube-apiserver');
  return process;
}

/** How many watch encoding errors kube-apiserver has logged since it started, and the first few (an assertion's message stays short). */
export async function watchEncodingErrors(controlPlane: ControlPlane): Promise<{ count: number; first: string[] }> {
  const log = await readFile(kubeApiserverProcess(controlPlane).logFile, 'utf8');
  const lines = log.split('\n').filter((line) => WATCH_ENCODING_ERROR.test(line));
  return { count: lines.length, first: lines.slice(0, 3) };
}

let clockTicksPerSecond: number | undefined;

/** CPU seconds (user + system, all threads) a process has used so far: fields 14 and 15 of /proc/<pid>/stat. */
export async function cpuSeconds(pid: number): Promise<number> {
  clockTicksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces: count from after it (field 3 is index 0).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
}
