/**
 * `make lint-manifests` (test/kubeconform/lint.ts): kubeconform validates
 * every entry point of deploy/, strictly, against the schemas of the tested
 * Kubernetes release and cert-manager's CRDs; deploy/ passes, and a field
 * that kube-apiserver would reject fails it.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { lintManifests, scratchCheckout } from '../kubeconform/lint.js';

const binDir = inject('controlPlaneBinDir');
const SCHEMA_GENERATION_TIMEOUT_MS = 5 * 60_000;

let checkout: string | undefined;
afterEach(async () => {
  if (checkout !== undefined) await fs.rm(checkout, { recursive: true, force: true });
});

async function edit(file: string, from: string, to: string): Promise<void> {
  const target = path.join(checkout ?? '', file);
  const text = await fs.readFile(target, 'utf8');
  expect(text).toContain(from);
  await fs.writeFile(target, text.replace(from, to));
}

describe('make lint-manifests', () => {
  it('finds every entry point of deploy/ valid', async () => {
    checkout = await scratchCheckout();
    expect(await lintManifests(checkout, { binDir })).toEqual([
      { entryPoint: 'deploy', code: 0, output: 'Summary: 18 resources found parsing stdin - Valid: 18, Invalid: 0, Errors: 0, Skipped: 0\n' },
      { entryPoint: 'deploy/overlays/cert-manager', code: 0, output: 'Summary: 21 resources found parsing stdin - Valid: 21, Invalid: 0, Errors: 0, Skipped: 0\n' },
      { entryPoint: 'deploy/overlays/dev', code: 0, output: 'Summary: 23 resources found parsing stdin - Valid: 23, Invalid: 0, Errors: 0, Skipped: 0\n' },
    ]);
  }, SCHEMA_GENERATION_TIMEOUT_MS);

  it('fails on a misspelt field, a wrong type, and a cert-manager field of the wrong type', async () => {
    checkout = await scratchCheckout();
    await edit('deploy/base/apiserver.yaml', '  replicas: 3\n', '  replicas: "3"\n');
    await edit('deploy/base/apiserver.yaml', '            periodSeconds: 2\n', '            periodSecond: 2\n');
    await edit('deploy/overlays/cert-manager/certificates.yaml', '  isCA: true\n', '  isCA: "yes"\n');
    const [base, certManager, dev] = await lintManifests(checkout, { binDir });

    expect(base?.code).toBe(1);
    const deployment = base?.output.split('\n').find((line) => line.startsWith('stdin - Deployment hostclaim-apiserver is invalid'));
    expect(deployment).toContain("at '/spec/replicas': got string, want integer");
    expect(deployment).toContain("at '/spec/template/spec/containers/0/startupProbe': additional properties 'periodSecond' not allowed");
    expect(base?.output).toMatch(/\nSummary: 18 resources found parsing stdin - Valid: 17, Invalid: 1, Errors: 0, Skipped: 0\n$/);

    expect(certManager?.code).toBe(1);
    expect(certManager?.output).toMatch(/^stdin - Certificate hostclaim-apiserver-ca is invalid: .* at '\/spec\/isCA': got string, want boolean\n/m);
    expect(certManager?.output).toMatch(/\nSummary: 21 resources found parsing stdin - Valid: 19, Invalid: 2, Errors: 0, Skipped: 0\n$/);

    // The dev overlay deletes the Deployment, so only the cert-manager-free base is left: valid.
    expect(dev).toEqual({ entryPoint: 'deploy/overlays/dev', code: 0, output: 'Summary: 23 resources found parsing stdin - Valid: 23, Invalid: 0, Errors: 0, Skipped: 0\n' });
  }, SCHEMA_GENERATION_TIMEOUT_MS);
});
