// Locates the control-plane binaries built from Go modules by build/build.sh.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { repoPath } from './paths.js';

/** Set by the integration global setup (and `make` targets) to skip calling build.sh. */
export const BIN_DIR_ENV = 'HOSTCLAIM_CONTROLPLANE_BIN';

export interface ControlPlaneBinaries {
  dir: string;
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
}

const buildScript = repoPath('test', 'controlplane', 'build', 'build.sh');

export async function kubernetesVersion(): Promise<string> {
  return (await fs.readFile(repoPath('test', 'controlplane', 'build', 'kubernetes-version'), 'utf8')).trim();
}

/** Uses $HOSTCLAIM_CONTROLPLANE_BIN if set, otherwise builds (or finds cached) binaries. */
export async function resolveControlPlaneBinaries(binDir = process.env[BIN_DIR_ENV]): Promise<ControlPlaneBinaries> {
  const dir = binDir ?? (await buildControlPlaneBinaries());
  const binaries: ControlPlaneBinaries = {
    dir,
    etcd: path.join(dir, 'etcd'),
    kubeApiserver: path.join(dir, 'kube-apiserver'),
    kubeControllerManager: path.join(dir, 'kube-controller-manager'),
    kubectl: path.join(dir, 'kubectl'),
  };
  await Promise.all(
    [binaries.etcd, binaries.kubeApiserver, binaries.kubeControllerManager, binaries.kubectl].map((file) =>
      fs.access(file, fs.constants.X_OK),
    ),
  );
  return binaries;
}

/**
 * Runs build.sh (instant when its cache is complete) and returns the binary
 * directory it prints last on stdout. Build progress goes to our stderr.
 * Not safe to run concurrently: build.sh rewrites its go.mod.
 */
export function buildControlPlaneBinaries(): Promise<string> {
  return runBuildScript(buildScript);
}

/** Runs one of the project's caching build scripts and returns the last line it prints (the path it built). */
export function runBuildScript(script: string, args: readonly string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(script, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const output = stdout.trim().split('\n').at(-1);
      if (code === 0 && output) resolve(output);
      else reject(new Error(`${script} failed with exit code ${code ?? 'null'}`));
    });
  });
}
