// `make lint-manifests`: every entry point of deploy/ rendered by the
// kubectl built with the control plane (its kustomize, as an admin's
// `kubectl apply -k` renders it) and validated by kubeconform against the
// schemas of the Kubernetes release the tests run (the default, newest
// supported one in `make test`; test/kubeconform/schemas.ts),
// strictly: unknown fields, wrong types and missing required fields fail.
// The schemas are generated once per machine from a throwaway control plane
// with cert-manager's CRDs installed, and cached next to the binaries.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { resolveControlPlaneBinaries, runBuildScript } from '../controlplane/binaries.js';
import { startControlPlane } from '../controlplane/controlplane.js';
import { waitForCrdsEstablished } from '../controlplane/crds.js';
import { repoPath } from '../controlplane/paths.js';
import { pollUntil } from '../controlplane/wait.js';
import { writeKubeconformSchemas } from './schemas.js';

const run = promisify(execFile);

/** The kustomizations an admin applies, and the one the tests install. */
export const ENTRY_POINTS = ['deploy', 'deploy/overlays/cert-manager', 'deploy/overlays/dev'] as const;

export interface LintResult {
  entryPoint: string;
  code: number;
  /** kubeconform's output: one line per invalid resource, then the summary. */
  output: string;
}

const CERT_MANAGER_CRDS_SCRIPT = repoPath('test', 'deploy', 'cert-manager-crds.sh');
/** A CRD kind whose schema shows the CRDs are published in /openapi/v2. */
const CERT_MANAGER_DEFINITION = 'io.cert-manager.v1.Certificate';

function cacheRoot(): string {
  return process.env['HOSTCLAIM_CACHE_DIR'] ?? path.join(process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'hostclaim-apiserver');
}

/**
 * The schema directory for these control-plane binaries (the Kubernetes
 * release under test: the default one in `make test`), cert-manager release
 * and generator; generated on first use.
 */
export async function kubeconformSchemas(binDir?: string): Promise<string> {
  const certManagerCrds = (await run(CERT_MANAGER_CRDS_SCRIPT)).stdout.trim();
  // build.sh names each binary directory by release and content (`v1.37.2-<key>`).
  const binaries = path.basename((await resolveControlPlaneBinaries(binDir)).dir);
  const key = createHash('sha256')
    .update(binaries)
    .update(certManagerCrds)
    .update(await fs.readFile(repoPath('test', 'kubeconform', 'schemas.ts')))
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(cacheRoot(), 'kubeconform-schemas', key);
  try {
    await fs.access(path.join(dir, '.complete'));
    return dir;
  } catch {
    // Not generated yet on this machine.
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  await fs.rm(tmp, { recursive: true, force: true });
  const cp = await startControlPlane(binDir === undefined ? {} : { binDir });
  try {
    await cp.applyFile(certManagerCrds);
    await waitForCrdsEstablished(cp, ['certificates.cert-manager.io', 'issuers.cert-manager.io']);
    const openapi = await pollUntil(
      `${CERT_MANAGER_DEFINITION} in /openapi/v2`,
      async () => {
        const document = await cp.requestJson<{ definitions: Record<string, Record<string, unknown>> }>('GET', '/openapi/v2');
        return CERT_MANAGER_DEFINITION in document.definitions ? document : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const count = await writeKubeconformSchemas(openapi, tmp);
    await fs.writeFile(path.join(tmp, '.complete'), `${count} schemas\n`);
  } finally {
    await cp.stop();
  }
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rename(tmp, dir);
  return dir;
}

/** Validates each entry point of `deployDir`'s checkout (its parent holds deploy/). */
export async function lintManifests(checkout: string, options: { binDir?: string } = {}): Promise<LintResult[]> {
  const kubeconform = await runBuildScript(repoPath('test', 'kubeconform', 'build.sh'));
  const { kubectl } = await resolveControlPlaneBinaries(options.binDir);
  const schemas = await kubeconformSchemas(options.binDir);
  const results: LintResult[] = [];
  for (const entryPoint of ENTRY_POINTS) {
    const rendered = await run(kubectl, ['kustomize', path.join(checkout, entryPoint)], { maxBuffer: 64 * 1024 * 1024 });
    const args = ['-strict', '-summary', '-schema-location', `${schemas}/{{.Group}}/{{.ResourceAPIVersion}}/{{.ResourceKind}}.json`, '-'];
    results.push({ entryPoint, ...(await runWithStdin(kubeconform, args, rendered.stdout)) });
  }
  return results;
}

function runWithStdin(command: string, args: string[], stdin: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({ code: code ?? 1, output });
    });
    child.stdin.end(stdin);
  });
}

/** A scratch copy of deploy/ with certificates, as generate-certificates.sh writes them for the default entry point. */
export async function scratchCheckout(): Promise<string> {
  const checkout = await fs.mkdtemp(path.join(os.tmpdir(), 'lint-manifests-'));
  await fs.cp(repoPath('deploy'), path.join(checkout, 'deploy'), { recursive: true, filter: (source) => path.basename(source) !== 'tls' });
  await run(path.join(checkout, 'deploy', 'generate-certificates.sh'));
  return checkout;
}

async function main(): Promise<void> {
  const checkout = await scratchCheckout();
  try {
    let failed = false;
    for (const result of await lintManifests(checkout)) {
      process.stdout.write(`${result.entryPoint}/: ${result.output}`);
      failed ||= result.code !== 0;
    }
    if (failed) process.exitCode = 1;
  } finally {
    await fs.rm(checkout, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) await main();
