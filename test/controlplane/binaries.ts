// Locates the control-plane binaries built from Go modules by build/build.sh.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { repoPath } from './paths.js';

/** Set by the integration global setup (and `make` targets) to skip calling build.sh. */
export const BIN_DIR_ENV = 'HOSTCLAIM_CONTROLPLANE_BIN';
/** The Kubernetes release to build and run (`make test-matrix` sets it per run); default: the newest supported. */
export const KUBERNETES_VERSION_ENV = 'HOSTCLAIM_KUBERNETES_VERSION';

export interface ControlPlaneBinaries {
  dir: string;
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
}

const buildScript = repoPath('test', 'controlplane', 'build', 'build.sh');

/** The supported Kubernetes releases (build/kubernetes-versions), newest first. */
export async function kubernetesVersions(): Promise<string[]> {
  const text = await fs.readFile(repoPath('test', 'controlplane', 'build', 'kubernetes-versions'), 'utf8');
  return text.split('\n').filter((line) => line.startsWith('v'));
}

/** The release under test: $HOSTCLAIM_KUBERNETES_VERSION, else the newest supported one (the default). */
export async function kubernetesVersion(): Promise<string> {
  const chosen = process.env[KUBERNETES_VERSION_ENV];
  if (chosen !== undefined && chosen !== '') return chosen;
  const [newest] = await kubernetesVersions();
  if (newest === undefined) throw new Error('test/controlplane/build/kubernetes-versions names no release');
  return newest;
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
 * Runs build.sh for the release under test (instant when its cache is
 * complete) and returns the binary directory it prints last on stdout.
 * Build progress goes to our stderr.
 */
export async function buildControlPlaneBinaries(): Promise<string> {
  return runBuildScript(buildScript, [await kubernetesVersion()]);
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
