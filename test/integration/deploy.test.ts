/**
 * deploy/ as an infrastructure admin installs it: `kubectl apply -k` with
 * the kubectl built from k8s.io/kubernetes (its embedded kustomize), against
 * the real kube-apiserver. The e2e environment itself installs
 * deploy/overlays/dev (test/controlplane/register.ts); this file proves the
 * two production entry points: the default (certificates from
 * deploy/generate-certificates.sh) applied for real, and the cert-manager
 * overlay server-side dry-run against cert-manager's CRDs from its Go module.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startControlPlane, type ControlPlane } from '../controlplane/controlplane.js';
import { waitForCrdsEstablished } from '../controlplane/crds.js';
import { repoPath } from '../controlplane/paths.js';
import { API_SERVICE_NAME, DEV_OVERLAY_DIR, renderKustomization } from '../controlplane/register.js';

const run = promisify(execFile);
const binDir = inject('controlPlaneBinDir');
const NAMESPACE = 'hostclaim-system';
const SERVICE_DNS_NAME = 'hostclaim-apiserver.hostclaim-system.svc';
const CERT_MANAGER_OVERLAY = repoPath('deploy', 'overlays', 'cert-manager');

interface ObjectId {
  kind: string;
  namespace?: string;
  name: string;
}

interface APIService {
  spec: { caBundle?: string; insecureSkipTLSVerify?: boolean; service: { namespace: string; name: string; port: number } };
}

interface Deployment {
  spec: { template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } } };
}

interface Secret {
  type: string;
  data: Record<string, string>;
}

function ids(yamlText: string): string[] {
  return parseAllDocuments(yamlText)
    .map((document) => document.toJS() as { kind: string; metadata: { namespace?: string; name: string } })
    .map(({ kind, metadata }) => describeId({ kind, namespace: metadata.namespace, name: metadata.name }))
    .sort();
}

function describeId({ kind, namespace, name }: ObjectId): string {
  return namespace === undefined ? `${kind} ${name}` : `${kind} ${namespace}/${name}`;
}

describe('kubectl apply -k deploy/', () => {
  let cp: ControlPlane;
  let scratch: string;
  /** A copy of deploy/ (so deploy/tls/ of the checkout is never written). */
  let deployDir: string;

  beforeAll(async () => {
    cp = await startControlPlane({ binDir });
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'deploy-test-'));
    deployDir = path.join(scratch, 'deploy');
    await fs.cp(repoPath('deploy'), deployDir, { recursive: true, filter: (source) => path.basename(source) !== 'tls' });
  });

  afterAll(async () => {
    await cp.stop();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  async function kubectl(args: string[]): Promise<string> {
    const result = await cp.kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`);
    return result.stdout;
  }

  async function generateCertificates(): Promise<{ ca: string; cert: string; key: string }> {
    await run(path.join(deployDir, 'generate-certificates.sh'), [], { env: { ...process.env } });
    const read = (file: string): Promise<string> => fs.readFile(path.join(deployDir, 'tls', file), 'utf8');
    return { ca: await read('ca.crt'), cert: await read('tls.crt'), key: await read('tls.key') };
  }

  it('without the certificates of generate-certificates.sh, refuses to render', async () => {
    const result = await cp.kubectl(['kustomize', deployDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('tls/tls.crt');
  });

  it('the default install applies; the APIService trusts the generated CA and the pods mount a certificate it signed', async () => {
    const { ca, cert, key } = await generateCertificates();
    const rendered = await renderKustomization(cp, deployDir);
    const secretName = /name: (hostclaim-apiserver-tls-[a-z0-9]+)\n/.exec(rendered)?.[1];
    expect(secretName).toBeDefined();
    expect(ids(rendered)).toEqual([
      'APIService v1alpha1.tenancy.metal3.io',
      'ClusterRole hostclaim-apiserver',
      'ClusterRole hostclaim-apiserver-aggregate-to-admin',
      'ClusterRole hostclaim-apiserver-aggregate-to-edit',
      'ClusterRole hostclaim-apiserver-aggregate-to-view',
      'ClusterRoleBinding hostclaim-apiserver',
      'ClusterRoleBinding hostclaim-apiserver:system:auth-delegator',
      'Deployment hostclaim-system/hostclaim-apiserver',
      'Namespace hostclaim-system',
      'NetworkPolicy hostclaim-system/hostclaim-apiserver',
      'PodDisruptionBudget hostclaim-system/hostclaim-apiserver',
      'PriorityClass hostclaim-apiserver',
      'Role hostclaim-system/hostclaim-apiserver',
      'RoleBinding hostclaim-system/hostclaim-apiserver',
      'RoleBinding kube-system/hostclaim-apiserver:extension-apiserver-authentication-reader',
      `Secret hostclaim-system/${secretName}`,
      'Service hostclaim-system/hostclaim-apiserver',
      'ServiceAccount hostclaim-system/hostclaim-apiserver',
    ]);

    await kubectl(['apply', '-k', deployDir, '--server-side', '--field-manager=admin']);

    const apiService = await cp.requestJson<APIService>('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${API_SERVICE_NAME}`);
    expect(Buffer.from(apiService.spec.caBundle ?? '', 'base64').toString()).toBe(ca);
    expect(apiService.spec.insecureSkipTLSVerify).toBeUndefined();
    expect(apiService.spec.service).toEqual({ namespace: NAMESPACE, name: 'hostclaim-apiserver', port: 443 });

    const deployment = await cp.requestJson<Deployment>('GET', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/hostclaim-apiserver`);
    expect(deployment.spec.template.spec.volumes).toEqual([{ name: 'serving-cert', secret: { secretName, defaultMode: 420 } }]);
    const secret = await cp.requestJson<Secret>('GET', `/api/v1/namespaces/${NAMESPACE}/secrets/${secretName}`);
    expect(secret.type).toBe('kubernetes.io/tls');
    const decoded = Object.fromEntries(Object.entries(secret.data).map(([name, value]) => [name, Buffer.from(value, 'base64').toString()]));
    expect(decoded).toEqual({ 'ca.crt': ca, 'tls.crt': cert, 'tls.key': key });

    const served = new X509Certificate(cert);
    expect(served.verify(new X509Certificate(ca).publicKey)).toBe(true);
    expect(served.checkHost(SERVICE_DNS_NAME)).toBe(SERVICE_DNS_NAME);
    expect(served.ca).toBe(false);
  });

  it('generate-certificates.sh again keeps the CA and issues a new serving certificate, which rolls the Secret name', async () => {
    const before = await fs.readFile(path.join(deployDir, 'tls', 'ca.crt'), 'utf8');
    const firstName = /name: (hostclaim-apiserver-tls-[a-z0-9]+)\n/.exec(await renderKustomization(cp, deployDir))?.[1];
    const { ca, cert } = await generateCertificates();
    expect(ca).toBe(before);
    const secondName = /name: (hostclaim-apiserver-tls-[a-z0-9]+)\n/.exec(await renderKustomization(cp, deployDir))?.[1];
    expect(secondName).toMatch(/^hostclaim-apiserver-tls-[a-z0-9]+$/);
    expect(secondName).not.toBe(firstName);
    expect(new X509Certificate(cert).verify(new X509Certificate(ca).publicKey)).toBe(true);
  });

  it('the cert-manager overlay passes a server-side dry-run once cert-manager CRDs are installed', async () => {
    // The namespace exists from the default install above; a dry-run creates nothing.
    const args = ['apply', '-k', CERT_MANAGER_OVERLAY, '--server-side', '--dry-run=server', '--field-manager=admin'];
    const withoutCrds = await cp.kubectl(args);
    expect(withoutCrds.code).toBe(1);
    expect(withoutCrds.stderr).toContain('no matches for kind "Certificate" in version "cert-manager.io/v1"');

    const { stdout: crdDir } = await run(repoPath('test', 'deploy', 'cert-manager-crds.sh'));
    await cp.applyFile(crdDir.trim());
    await waitForCrdsEstablished(cp, ['certificates.cert-manager.io', 'issuers.cert-manager.io']);

    const applied = (await kubectl(args)).trim().split('\n').sort();
    expect(applied).toContain('certificate.cert-manager.io/hostclaim-apiserver serverside-applied (server dry run)');
    expect(applied).toContain('certificate.cert-manager.io/hostclaim-apiserver-ca serverside-applied (server dry run)');
    expect(applied).toContain('issuer.cert-manager.io/hostclaim-apiserver-ca serverside-applied (server dry run)');
    expect(applied).toContain('issuer.cert-manager.io/hostclaim-apiserver-selfsigned serverside-applied (server dry run)');
    expect(applied).toContain('apiservice.apiregistration.k8s.io/v1alpha1.tenancy.metal3.io serverside-applied (server dry run)');
    // The base's 17 objects and the 4 of certificates.yaml, every one accepted.
    expect(applied).toHaveLength(17 + 4);
    expect(applied.filter((line) => !line.endsWith(' serverside-applied (server dry run)'))).toEqual([]);
    const rendered = parseAllDocuments(await renderKustomization(cp, CERT_MANAGER_OVERLAY)).map((document) => document.toJS() as {
      kind: string;
      metadata: { annotations?: Record<string, string> };
    });
    expect(rendered.find((object) => object.kind === 'APIService')?.metadata.annotations).toEqual({
      'cert-manager.io/inject-ca-from': 'hostclaim-system/hostclaim-apiserver',
    });
  });

  it('the dev overlay (the e2e environment) is the base without the Deployment, with sample tenants and the cluster-wide-reads grant', async () => {
    const base = ids(await renderKustomization(cp, repoPath('deploy', 'base')));
    const tenants = ids(await fs.readFile(path.join(DEV_OVERLAY_DIR, 'tenants.yaml'), 'utf8'));
    const grant = ids(await fs.readFile(repoPath('deploy', 'components', 'cluster-wide-reads', 'cluster-wide-reads.yaml'), 'utf8'));
    expect(grant).toEqual(['ClusterRole hostclaim-apiserver-cluster-wide-reads', 'ClusterRoleBinding hostclaim-apiserver-cluster-wide-reads']);
    const expected = [...base.filter((id) => id !== 'Deployment hostclaim-system/hostclaim-apiserver'), ...tenants, ...grant].sort();
    const dev = await renderKustomization(cp, DEV_OVERLAY_DIR);
    expect(ids(dev)).toEqual(expected);
    const service = parseAllDocuments(dev).map((document) => document.toJS() as { kind: string; spec?: unknown }).find((object) => object.kind === 'Service');
    expect(service?.spec).toEqual({ type: 'ExternalName', externalName: '127.0.0.1' });
  });
});
