/**
 * HardwareData through the real aggregator, as tenants read it: discovery,
 * visibility per HostDeployPolicy in lists, gets and a running watch, the
 * kubectl table, and that nothing of a host's BMC reaches a tenant.
 *
 * baremetal-operator does not run here: its CRDs are installed from the Go
 * module cache after the server started (the server must pick them up), and
 * BareMetalHosts are created as admin with a status written through the
 * status subresource, which then stays as written.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { delay, pollUntil } from '../controlplane/wait.js';

const binDir = inject('controlPlaneBinDir');
const bmoModule = 'github.com/metal3-io/baremetal-operator@v0.13.2';
const crds = ['metal3.io_baremetalhosts.yaml', 'metal3.io_hostdeploypolicies.yaml'];
const group = '/apis/tenancy.metal3.io/v1alpha1';
const bmcAddress = 'redfish://192.0.2.250/redfish/v1/Systems/1';
const bmcSecret = 'rack1-node-bmc-secret';
const ironicId = '0b7c2b3e-ironic-node-id';
let env: DevEnvironment;

type Tenant = 'tenant-a' | 'tenant-b';

interface HardwareData {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; creationTimestamp: string; labels?: Record<string, string>; annotations?: unknown };
  spec: { hardware?: Record<string, unknown> };
}

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `hardwaredata-${process.pid}`), serverEntry: 'dist/src/main.js', binDir });
});

afterAll(async () => {
  await env.stop();
});

async function installMetal3Crds(): Promise<void> {
  const modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const files = crds.map((crd) => path.join(modCache, bmoModule, 'config', 'base', 'crds', 'bases', crd));
  for (const file of files) await env.controlPlane.applyFile(file);
  await admin(['wait', '--for=condition=Established', '--timeout=60s', ...files.flatMap((f) => ['-f', f])]);
}

function kubectl(tenant: Tenant | 'admin', args: string[]) {
  const kubeconfig = tenant === 'admin' ? env.adminKubeconfigPath : env.tenantKubeconfigPaths[tenant];
  return env.controlPlane.kubectl(args, { kubeconfig });
}

async function ok(tenant: Tenant | 'admin', args: string[]): Promise<string> {
  const result = await kubectl(tenant, args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

function admin(args: string[]): Promise<string> {
  return ok('admin', args);
}

async function createHost(name: string, labels: Record<string, string>, consumerRef?: Record<string, string>): Promise<void> {
  await env.controlPlane.apply(
    JSON.stringify({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name, namespace: 'infra', labels, annotations: { 'baremetalhost.metal3.io/status': `{"bmc":"${bmcAddress}"}` } },
      spec: { online: false, bmc: { address: bmcAddress, credentialsName: bmcSecret }, ...(consumerRef === undefined ? {} : { consumerRef }) },
    }),
  );
  const status = {
    operationalStatus: 'OK',
    errorCount: 0,
    errorMessage: `power on failed: cannot reach ${bmcAddress}`,
    poweredOn: false,
    provisioning: { state: 'available', ID: ironicId },
    goodCredentials: { credentials: { name: bmcSecret, namespace: 'infra' }, credentialsVersion: '1' },
    hardware: {
      systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R650', serialNumber: `SN-${name}` },
      firmware: { bios: { vendor: 'Dell', version: '1.2.3', date: '2025-01-01' } },
      ramMebibytes: 65536,
      cpu: { arch: 'x86_64', model: 'Xeon Gold', clockMegahertz: 2100, count: 32, flags: ['avx2'] },
      nics: [{ name: 'eno1', mac: '00:11:22:33:44:55', ip: '192.0.2.10', speedGbps: 25, pxe: true }],
      storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 960197124096, rotational: false }],
      hostname: name,
    },
  };
  await admin(['-n', 'infra', 'patch', 'baremetalhost', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
}

async function applyPolicy(name: string, hostClaimNamespaces: Record<string, unknown>, sharedLabels?: string): Promise<void> {
  await env.controlPlane.apply(
    JSON.stringify({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HostDeployPolicy',
      metadata: { name, namespace: 'infra', ...(sharedLabels === undefined ? {} : { annotations: { 'tenancy.metal3.io/shared-labels': sharedLabels } }) },
      spec: { hostClaimNamespaces },
    }),
  );
}

async function listNames(tenant: Tenant, query = ''): Promise<string[]> {
  const list = JSON.parse(await ok(tenant, ['get', '--raw', `${group}/namespaces/${tenant}/hardwaredata${query}`])) as { items: HardwareData[] };
  return list.items.map((i) => i.metadata.name).sort();
}

/** Until both a consistent list and the cache (resourceVersion=0) show exactly `expected`. */
function waitForNames(tenant: Tenant, expected: string[]): Promise<true> {
  let last: string[][] = [];
  return pollUntil(
    `${tenant} to see exactly ${expected.join(', ') || 'nothing'}`,
    async () => {
      last = [await listNames(tenant), await listNames(tenant, '?resourceVersion=0')];
      return last.every((names) => JSON.stringify(names) === JSON.stringify(expected)) ? true : undefined;
    },
    // The server retries the (then absent) metal3.io resources with a backoff of up to 30 s.
    { timeoutMs: 60_000, intervalMs: 500, describeFailure: () => `last seen (consistent, cached): ${JSON.stringify(last)}` },
  );
}

describe('without the metal3.io CRDs', () => {
  it('serves empty HardwareData, still serves HostClaims, and logs the absence quietly', async () => {
    // resourceVersion=0 reads the hub: 429 until every source has synced or is known to be absent.
    await pollUntil('the HardwareData cache to be ready', async () => ((await kubectl('tenant-a', ['get', '--raw', `${group}/namespaces/tenant-a/hardwaredata?resourceVersion=0`])).code === 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    expect(await listNames('tenant-a')).toEqual([]);
    expect(await listNames('tenant-a', '?resourceVersion=0')).toEqual([]);
    const claim = '{"apiVersion":"tenancy.metal3.io/v1alpha1","kind":"HostClaim","metadata":{"name":"c-0"},"spec":{"poweredOn":false}}';
    expect(await env.controlPlane.kubectl(['-n', 'tenant-a', 'create', '-f', '-'], { kubeconfig: env.tenantKubeconfigPaths['tenant-a'], stdin: claim })).toMatchObject({ code: 0 });
    // Gone before hosts exist, so the binder never gives it one of them.
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hostclaim', 'c-0', '--wait']);
    await delay(5000); // a few informer retries
    const log = await readFile(env.serverLogPath, 'utf8');
    // One shared cache per resource says it once, for HardwareData and the binder alike; the retries are not logged.
    expect(log.match(/informer: \/apis\/metal3\.io\/v1alpha1\/baremetalhosts is not served/g)).toHaveLength(1);
    expect(log.match(/informer: \/apis\/metal3\.io\/v1alpha1\/hostdeploypolicies is not served/g)).toHaveLength(1);
    expect(log).not.toMatch(/informer: list or watch of \/apis\/metal3\.io\/v1alpha1\/\w+ failed/);
  });
});

describe('discovery', () => {
  beforeAll(async () => {
    await installMetal3Crds();
    await createHost('node-1', { role: 'worker', 'example.com/rack': 'r1', 'cluster.x-k8s.io/cluster-name': 'someone-else' });
    await createHost('node-2', {});
    await createHost('taken', {}, { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'Metal3Machine', namespace: 'tenant-a', name: 'm-0' });
    await applyPolicy('for-tenant-a', { names: ['tenant-a'] }, 'role|example\\.com/.*|cluster\\.x-k8s\\.io/.*');
  });

  it('lists hardwaredata with exactly get, list and watch', async () => {
    const wide = await ok('tenant-a', ['api-resources', '--api-group=tenancy.metal3.io', '-o', 'wide']);
    expect(wide).toMatch(/^hardwaredata\s+tenancy\.metal3\.io\/v1alpha1\s+true\s+HardwareData\s+get,list,watch\s+metal3$/m);
    const resources = JSON.parse(await ok('tenant-a', ['get', '--raw', group])) as { resources: { name: string; verbs: string[] }[] };
    expect(resources.resources.find((r) => r.name === 'hardwaredata')?.verbs).toEqual(['get', 'list', 'watch']);
  });

  it('refuses writes with 405 as kube does for an unsupported verb', async () => {
    // As admin: kube-apiserver would refuse a tenant (no RBAC for writes) before asking us.
    const forged = { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HardwareData', metadata: { name: 'forged' } };
    const post = await env.controlPlane.request('POST', `${group}/namespaces/tenant-a/hardwaredata`, forged);
    expect(post.status).toBe(405);
    expect(JSON.parse(post.body)).toMatchObject({ reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' });
    const del = await env.controlPlane.request('DELETE', `${group}/namespaces/tenant-a/hardwaredata/infra.node-1`);
    expect(del.status).toBe(405);
  });
});

describe('visibility', () => {
  it('shows tenant-a the free hosts a policy admits it to, and tenant-b nothing', async () => {
    await waitForNames('tenant-a', ['infra.node-1', 'infra.node-2']);
    expect(await listNames('tenant-b')).toEqual([]);
  });

  it('answers 404 with kube wording for a host the tenant may not see', async () => {
    for (const [tenant, name] of [
      ['tenant-b', 'infra.node-1'],
      ['tenant-a', 'infra.taken'],
      ['tenant-a', 'infra.no-such-host'],
    ] as const) {
      const result = await kubectl(tenant, ['-n', tenant, 'get', 'hardwaredata', name]);
      expect(result.code, `${tenant} ${name}`).not.toBe(0);
      expect(result.stderr).toContain(`hardwaredata.tenancy.metal3.io "${name}" not found`);
    }
  });

  it('serves a cluster-wide list and field and label selectors', async () => {
    const all = JSON.parse(await admin(['get', '--raw', `${group}/hardwaredata`])) as { items: HardwareData[] };
    expect(all.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(['tenant-a/infra.node-1', 'tenant-a/infra.node-2']);
    // Pages of one, at the first page's resourceVersion, and the token is bound to its list.
    const first = JSON.parse(await admin(['get', '--raw', `${group}/hardwaredata?limit=1`])) as { items: HardwareData[]; metadata: { continue?: string; resourceVersion: string } };
    expect(first.items.map((i) => i.metadata.name)).toEqual(['infra.node-1']);
    const token = encodeURIComponent(first.metadata.continue ?? '');
    const second = JSON.parse(await admin(['get', '--raw', `${group}/hardwaredata?limit=1&continue=${token}`])) as { items: HardwareData[]; metadata: { continue?: string; resourceVersion: string } };
    expect(second.items.map((i) => i.metadata.name)).toEqual(['infra.node-2']);
    expect(second.metadata).toEqual({ resourceVersion: first.metadata.resourceVersion });
    const replayed = await kubectl('tenant-a', ['get', '--raw', `${group}/namespaces/tenant-a/hardwaredata?limit=1&continue=${token}`]);
    expect(replayed.stderr).toContain('invalid continue token: continue key is not valid: it was issued for another list');
    expect(await listNames('tenant-a', '?labelSelector=role%3Dworker')).toEqual(['infra.node-1']);
    expect(await listNames('tenant-a', '?fieldSelector=metadata.name%3Dinfra.node-2')).toEqual(['infra.node-2']);
    expect(await listNames('tenant-a', '?resourceVersion=0')).toEqual(['infra.node-1', 'infra.node-2']);
  });
});

describe('content', () => {
  it('is the inventory with the shared labels only, and nothing of the BMC anywhere', async () => {
    const text = await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata', 'infra.node-1', '-o', 'json']);
    const object = JSON.parse(text) as HardwareData;
    const host = JSON.parse(await admin(['-n', 'infra', 'get', 'baremetalhost', 'node-1', '-o', 'json'])) as HardwareData;
    expect(object.metadata.labels).toEqual({ 'example.com/rack': 'r1', role: 'worker' });
    expect(object.metadata.annotations).toBeUndefined();
    expect(object.metadata.uid).not.toBe(host.metadata.uid);
    expect(object.metadata.creationTimestamp).toBe(host.metadata.creationTimestamp);
    expect(object.spec.hardware).toMatchObject({ ramMebibytes: 65536, cpu: { arch: 'x86_64', count: 32 }, systemVendor: { manufacturer: 'Dell Inc.' } });
    const everything = [
      text,
      await ok('tenant-a', ['get', '--raw', `${group}/namespaces/tenant-a/hardwaredata`]),
      await ok('tenant-a', ['get', '--raw', `${group}/namespaces/tenant-a/hardwaredata?resourceVersion=0`]),
      await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata', '-o', 'yaml', '--show-managed-fields']),
    ].join('\n');
    for (const secret of ['192.0.2.250', bmcSecret, ironicId, 'cannot reach', 'someone-else', 'goodCredentials', 'consumerRef', 'baremetalhost.metal3.io']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('prints a kubectl table', async () => {
    const table = await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata']);
    expect(table).toMatch(/^NAME\s+MANUFACTURER\s+PRODUCT\s+ARCH\s+CPUS\s+MEMORY\s+AGE\n/);
    expect(table).toMatch(/^infra\.node-1\s+Dell Inc\.\s+PowerEdge R650\s+x86_64\s+32\s+64Gi\s+\S+$/m);
    expect(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata', '-o', 'wide'])).toMatch(/CPU MODEL\s+NICS\s+DISKS/);
  });
});

describe('watch', () => {
  it('adds the hosts when a policy admits the tenant and deletes them when it goes', async () => {
    const config = new KubeConfig();
    config.loadFromFile(env.tenantKubeconfigPaths['tenant-b']);
    const events: string[] = [];
    const watch = await new Watch(config).watch(
      `${group}/namespaces/tenant-b/hardwaredata`,
      { allowWatchBookmarks: true },
      (type: string, object: HardwareData) => {
        if (type !== 'BOOKMARK') events.push(`${type} ${object.metadata.name}`);
      },
      () => undefined,
    );
    try {
      const seen = (expected: string[]) =>
        pollUntil(`tenant-b's watch to report ${expected.join(', ')}`, () => Promise.resolve(expected.every((e) => events.includes(e)) ? true : undefined), {
          timeoutMs: 30_000,
          describeFailure: () => events.join('\n'),
        });
      await applyPolicy('for-tenant-b', { nameMatches: 'tenant-b' });
      await seen(['ADDED infra.node-1', 'ADDED infra.node-2']);
      expect(await listNames('tenant-b')).toEqual(['infra.node-1', 'infra.node-2']);
      // No label is shared through this policy.
      expect((JSON.parse(await ok('tenant-b', ['-n', 'tenant-b', 'get', 'hardwaredata', 'infra.node-1', '-o', 'json'])) as HardwareData).metadata.labels).toBeUndefined();
      await admin(['-n', 'infra', 'delete', 'hostdeploypolicy', 'for-tenant-b']);
      await seen(['DELETED infra.node-1', 'DELETED infra.node-2']);
      expect(events).not.toContain('ADDED infra.taken');
    } finally {
      watch.abort();
    }
    expect(await listNames('tenant-b')).toEqual([]);
  });

  it('serves WatchList and Table watches from the generic layer', async () => {
    const watchList = await ok('tenant-a', [
      'get',
      '--raw',
      `${group}/namespaces/tenant-a/hardwaredata?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=2`,
    ]);
    const events = watchList
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { type: string; object: HardwareData });
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`).slice(0, 2)).toEqual(['ADDED infra.node-1', 'ADDED infra.node-2']);
    expect(events.find((e) => e.type === 'BOOKMARK')?.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    const table = await kubectl('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata', '--watch', '--request-timeout=3s']);
    expect(table.stdout).toMatch(/^NAME\s+MANUFACTURER\s+PRODUCT\s+ARCH\s+CPUS\s+MEMORY\s+AGE\ninfra\.node-1\s+Dell Inc\./);
  });

  it('follows host changes: a host that is taken disappears, one given back reappears', async () => {
    await admin(['-n', 'infra', 'patch', 'baremetalhost', 'node-2', '--type=merge', '-p', JSON.stringify({ spec: { consumerRef: { kind: 'Metal3Machine', name: 'm-1', namespace: 'tenant-b' } } })]);
    await waitForNames('tenant-a', ['infra.node-1']);
    await admin(['-n', 'infra', 'patch', 'baremetalhost', 'node-2', '--type=json', '-p', '[{"op":"remove","path":"/spec/consumerRef"}]']);
    await waitForNames('tenant-a', ['infra.node-1', 'infra.node-2']);
  });
});
