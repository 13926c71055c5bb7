/**
 * The foundation through the real aggregator: registration and availability,
 * discovery and OpenAPI as kubectl sees them, who gets in (front proxy only)
 * and who is refused (kube's 401/403 Status), and rotation of the serving
 * certificate and of the front-proxy CA without a restart.
 * Availability assertions follow test/e2e/apimachinery/aggregator.go upstream.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { API_SERVICE_NAME, waitForAPIServiceAvailable } from '../controlplane/register.js';
import { pollUntil } from '../controlplane/wait.js';
import { createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';
import { json, request } from '../support/https-client.js';

const binDir = inject('controlPlaneBinDir');
let env: DevEnvironment;
let frontProxyClient: { certPem: string; keyPem: string };
let startedAt: number;

beforeAll(async () => {
  const workDir = path.join(os.tmpdir(), `aggregation-${process.pid}`);
  startedAt = Date.now();
  env = await startDevEnvironment({ workDir, serverEntry: 'dist/src/main.js', binDir });
  frontProxyClient = {
    certPem: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.crt'), 'utf8'),
    keyPem: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.key'), 'utf8'),
  };
});

afterAll(async () => {
  await env.stop();
});

function kubectlAs(tenant: 'tenant-a' | 'tenant-b', args: string[]) {
  return env.controlPlane.kubectl(args, { kubeconfig: env.tenantKubeconfigPaths[tenant] });
}

/** A request straight to our server, bypassing kube-apiserver. */
function direct(options: { path: string; headers?: Record<string, string | string[]>; client?: { certPem: string; keyPem: string } }) {
  return request({
    port: env.serverPort,
    caPem: env.aggregatedServerCaPem,
    servername: 'hostclaim-apiserver.hostclaim-system.svc',
    ...options,
  });
}

describe('registration', () => {
  it('makes the APIService Available with "all checks passed" within 30 s of the server starting', async () => {
    const condition = await waitForAPIServiceAvailable(env.controlPlane, 30_000);
    expect(condition).toMatchObject({ type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' });
    const apiservice = await env.controlPlane.kubectl(['get', 'apiservice', API_SERVICE_NAME, '-o', 'jsonpath={.spec}']);
    const spec = JSON.parse(apiservice.stdout) as Record<string, unknown>;
    expect(spec['insecureSkipTLSVerify']).toBeUndefined();
    expect(typeof spec['caBundle']).toBe('string');
    expect(Date.now() - startedAt).toBeLessThan(120_000);
  });
});

describe('discovery and OpenAPI through the aggregator', () => {
  it('serves the group/version resource list to a tenant', async () => {
    const res = await kubectlAs('tenant-a', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1']);
    expect(res.code).toBe(0);
    const list = JSON.parse(res.stdout) as { resources: { name: string; kind: string; shortNames?: string[]; categories?: string[] }[] };
    expect(list.resources.map((r) => r.name)).toEqual(['hostclaims', 'hostclaims/status', 'hardwaredata']);
    expect(list.resources[0]).toMatchObject({ kind: 'HostClaim', shortNames: ['hc'], categories: ['metal3'] });
    expect(list.resources[2]).toMatchObject({ kind: 'HardwareData', categories: ['metal3'] });
  });

  it('lists in kubectl api-resources every resource that serves a verb', async () => {
    const discovery = JSON.parse((await kubectlAs('tenant-a', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1'])).stdout) as {
      resources: { name: string; verbs: string[] }[];
    };
    const served = discovery.resources.filter((r) => !r.name.includes('/') && r.verbs.length > 0).map((r) => r.name);
    const res = await kubectlAs('tenant-a', ['api-resources', '--api-group=tenancy.metal3.io', '-o', 'name']);
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n').filter((l) => l !== '').sort()).toEqual(served.map((n) => `${n}.tenancy.metal3.io`).sort());
  });

  it('merges our group into aggregated discovery v2 at kube-apiserver', async () => {
    const res = await env.controlPlane.request('GET', '/apis');
    expect(res.status).toBe(200);
    const groups = (JSON.parse(res.body) as { groups: { name: string }[] }).groups.map((g) => g.name);
    expect(groups).toContain('tenancy.metal3.io');
  });

  it('publishes OpenAPI v3 for the group through the aggregator', async () => {
    // The aggregator downloads specs asynchronously after registration.
    await pollUntil(
      'kube-apiserver to list our group in /openapi/v3',
      async () => ((await kubectlAs('tenant-a', ['get', '--raw', '/openapi/v3'])).stdout.includes('apis/tenancy.metal3.io/v1alpha1') ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const doc = await kubectlAs('tenant-a', ['get', '--raw', '/openapi/v3/apis/tenancy.metal3.io/v1alpha1']);
    const parsed = JSON.parse(doc.stdout) as { components: { schemas: Record<string, unknown> } };
    expect(Object.keys(parsed.components.schemas)).toContain('io.metal3.tenancy.v1alpha1.HostClaim');
  });
});

describe('authentication and authorization', () => {
  const asMasters = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };

  it('rejects identity headers without a client certificate (401 Status)', async () => {
    const res = await direct({ path: '/apis/tenancy.metal3.io/v1alpha1', headers: asMasters });
    expect(res.status).toBe(401);
    expect(json(res)).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
  });

  it('rejects identity headers with a certificate from the wrong CA (401 Status)', async () => {
    const rogueCA = await createCertificateAuthority('rogue');
    const rogue = await issueCertificate(rogueCA, { commonName: 'front-proxy-client', usage: 'client' });
    const res = await direct({ path: '/apis/tenancy.metal3.io/v1alpha1', headers: asMasters, client: rogue });
    expect(res.status).toBe(401);
    expect(json(res)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('accepts the real front proxy', async () => {
    const res = await direct({ path: '/apis/tenancy.metal3.io/v1alpha1', headers: asMasters, client: frontProxyClient });
    expect(res.status).toBe(200);
  });

  it('refuses tenant-b in tenant-a through the aggregator with kube wording (403 Status)', async () => {
    const res = await kubectlAs('tenant-b', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'hostclaims.tenancy.metal3.io is forbidden: User "tenant-b" cannot list resource "hostclaims" in API group "tenancy.metal3.io" in the namespace "tenant-a"',
    );
  });

  it('asks kube-apiserver (SubjectAccessReview) and refuses tenant-b in tenant-a itself too', async () => {
    const res = await direct({
      path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims',
      headers: { 'X-Remote-User': 'tenant-b', 'X-Remote-Group': 'system:authenticated' },
      client: frontProxyClient,
    });
    expect(res.status).toBe(403);
    expect(json(res)).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message:
        'hostclaims.tenancy.metal3.io is forbidden: User "tenant-b" cannot list resource "hostclaims" in API group "tenancy.metal3.io" in the namespace "tenant-a"',
      details: { group: 'tenancy.metal3.io', kind: 'hostclaims' },
    });
  });

  it('lets a tenant through its own namespace, as RBAC on the virtual resource allows', async () => {
    const res = await direct({
      path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims',
      headers: { 'X-Remote-User': 'tenant-a', 'X-Remote-Group': 'system:authenticated' },
      client: frontProxyClient,
    });
    // Authorized: what answers now is the resource layer, not a 401/403.
    expect([200, 404, 405]).toContain(res.status);
  });
});

describe('rotation without restart', () => {
  it('serves a rotated serving certificate and stays Available', async () => {
    const before = env.serverProcess?.pid;
    await env.rotateServingCertificate();
    expect(env.serverProcess?.pid).toBe(before);
    const res = await direct({ path: '/readyz' });
    expect(res.status).toBe(200);
    const condition = await waitForAPIServiceAvailable(env.controlPlane, 30_000);
    expect(condition.status).toBe('True');
    const discovery = await kubectlAs('tenant-a', ['get', '--raw', '/apis/tenancy.metal3.io/v1alpha1']);
    expect(discovery.code).toBe(0);
  });

  it('trusts a new front-proxy CA published in extension-apiserver-authentication', async () => {
    const newCA = await createCertificateAuthority('front-proxy-ca-2');
    const newProxy = await issueCertificate(newCA, { commonName: 'front-proxy-client', usage: 'client' });
    const asMasters = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
    expect((await direct({ path: '/apis/tenancy.metal3.io/v1alpha1', headers: asMasters, client: newProxy })).status).toBe(401);

    const cmPath = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';
    const cm = await env.controlPlane.requestJson<{ data: Record<string, string> }>('GET', cmPath);
    const bundle = `${cm.data['requestheader-client-ca-file'] ?? ''}\n${newCA.certPem}`;
    const patch = JSON.stringify({ data: { 'requestheader-client-ca-file': bundle } });
    const patched = await env.controlPlane.kubectl(['-n', 'kube-system', 'patch', 'configmap', 'extension-apiserver-authentication', '--type=merge', '-p', patch]);
    expect(patched.code).toBe(0);

    await pollUntil(
      'the server trusts the new front-proxy CA',
      async () => ((await direct({ path: '/apis/tenancy.metal3.io/v1alpha1', headers: asMasters, client: newProxy })).status === 200 ? true : undefined),
      { timeoutMs: 30_000 },
    );
    // The old front proxy keeps working: kube-apiserver still uses it.
    expect((await direct({ path: '/apis/tenancy.metal3.io/v1alpha1', headers: asMasters, client: frontProxyClient })).status).toBe(200);
  });
});

describe('operational endpoints', () => {
  it('answers health probes without credentials and /version', async () => {
    for (const probe of ['/healthz', '/livez', '/readyz']) expect((await direct({ path: probe })).status).toBe(200);
    const verbose = await direct({ path: '/readyz?verbose' });
    expect(verbose.body).toContain('[+]authentication-configuration ok');
    // Ready only once HardwareData's first lists are in: a replica behind a Service never answers its reads with 429.
    expect(verbose.body).toContain('[+]hardwaredata-storage ok');
    const version = await direct({ path: '/version', headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' }, client: frontProxyClient });
    expect(json(version)).toMatchObject({ gitVersion: expect.stringMatching(/^v\d+\.\d+\.\d+/) as unknown });
  });

  it('exposes kube-apiserver style metrics to authorized users only', async () => {
    const asMasters = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
    const metrics = await direct({ path: '/metrics', headers: asMasters, client: frontProxyClient });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/apiserver_request_total\{[^}]*code="200"/);
    expect(metrics.body).toContain('apiserver_request_duration_seconds_bucket');
    // The built server hands glibc's free memory back (native/malloc-trim.c): the addon was built and loaded.
    expect(metrics.body).toMatch(/^hostclaim_apiserver_native_memory_release_enabled 1$/m);
    // And gives an idle server's V8 heap back after a burst (idle-heap-release.ts): a count, whatever it is yet.
    expect(metrics.body).toMatch(/^hostclaim_apiserver_heap_releases_total \d+$/m);
    const tenant = await direct({ path: '/metrics', headers: { 'X-Remote-User': 'tenant-a', 'X-Remote-Group': 'system:authenticated' }, client: frontProxyClient });
    expect(tenant.status).toBe(403);
    expect(json(tenant)).toMatchObject({ message: 'forbidden: User "tenant-a" cannot get path "/metrics"' });
  });

  it('comes back Available after a restart', async () => {
    await env.restartServer();
    const condition = await waitForAPIServiceAvailable(env.controlPlane, 30_000);
    expect(condition.status).toBe('True');
  });
});
