/**
 * Reads served from memory never return state older than a write
 * acknowledged before they started, on any replica: two server replicas,
 * each with its own caches; every write goes through replica A, and the
 * read right after it through replica B (directly on its port, with the
 * front-proxy certificate and identity headers, as the aggregator sends
 * them), for GET, namespace LIST, label-selected LIST, a LIST pinned to
 * one name and the cluster-wide LIST, many times over. The binder is off,
 * so every write is the test's and every resourceVersion is exact.
 *
 * Replica B talks to kube-apiserver through a proxy that holds everything
 * kube-apiserver sends it for 300 ms, so its watch events arrive well after
 * the write's answer has reached the test: a replica answering from its
 * cache without the consistent-read fence would return the old state here.
 * B reaches A directly, so its records' reads are proven fresh by A's write
 * watermark (backing/replica-watermarks.ts) and wait for its lagging cache;
 * HardwareData's inputs are written straight to kube-apiserver here, so
 * those reads are proven by probes.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { startDelayingProxy, type DelayingProxy } from '../support/delaying-proxy.js';
import { pollUntil } from '../controlplane/wait.js';
import { rawClients, type Identity, type RawClients, type RawResponse } from '../support/raw-http.js';

const binDir = inject('controlPlaneBinDir');
const NAMESPACE = 'tenant-a';
const COLLECTION = `/apis/tenancy.metal3.io/v1alpha1/namespaces/${NAMESPACE}/hostclaims`;
const ALL = '/apis/tenancy.metal3.io/v1alpha1/hostclaims';
const ITERATIONS = 20;
const tenant: Identity = { user: NAMESPACE };
const admin: Identity = { user: 'admin', groups: ['system:masters'] };

interface Claim {
  metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> };
}

interface ClaimList {
  metadata: { resourceVersion: string; continue?: string };
  items: Claim[];
}

const LAG_MS = 300;

let env: DevEnvironment;
let proxy: DelayingProxy | undefined;
let replicaA: RawClients;
let replicaB: RawClients;

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `replica-reads-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder' });
  const kube = new URL(env.controlPlane.server);
  proxy = await startDelayingProxy({ host: kube.hostname, port: Number(kube.port) }, LAG_MS);
  const lagging = path.join(env.workDir, 'lagging-replica.kubeconfig');
  const kubeconfig = parseYaml(await readFile(env.serverKubeconfigPath, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  for (const { cluster } of kubeconfig.clusters) cluster.server = `https://${kube.hostname}:${proxy.port}`;
  await writeFile(lagging, stringifyYaml(kubeconfig));
  await env.startReplica({ kubeconfigPath: lagging });
  const [replicaUrl] = env.replicaUrls;
  if (replicaUrl === undefined) throw new Error('no replica started');
  replicaA = await rawClients(env);
  replicaB = await rawClients(env, replicaUrl);
}, 180_000);

afterAll(async () => {
  await env.stop();
  await proxy?.close();
});

function expectStatus(response: RawResponse, status: number): void {
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${response.body}`);
}

async function write(method: 'POST' | 'PATCH' | 'DELETE', name: string, body?: object): Promise<Claim> {
  const response = await replicaA.direct(tenant, {
    method,
    path: method === 'POST' ? COLLECTION : `${COLLECTION}/${name}`,
    ...(body === undefined
      ? {}
      : { headers: { 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }, body: JSON.stringify(body) }),
  });
  expectStatus(response, method === 'POST' ? 201 : 200);
  return response.json as Claim;
}

async function readB<T>(identity: Identity, requestPath: string, status = 200): Promise<T> {
  const response = await replicaB.direct(identity, { path: requestPath });
  expectStatus(response, status);
  return response.json as T;
}

/** name@resourceVersion of the list's items (and the list's resourceVersion never below the write's). */
function seen(list: ClaimList, after: Claim): string[] {
  expect(BigInt(list.metadata.resourceVersion) >= BigInt(after.metadata.resourceVersion)).toBe(true);
  return list.items.map((c) => `${c.metadata.name}@${c.metadata.resourceVersion}`);
}

const claim = (name: string, labels: Record<string, string>): object => ({
  apiVersion: 'tenancy.metal3.io/v1alpha1',
  kind: 'HostClaim',
  metadata: { name, labels },
  spec: { poweredOn: false },
});

describe('a write through one replica is visible to the next read through another', () => {
  it('GET: after create, update and delete', async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      const name = `get-${i}`;
      const created = await write('POST', name, claim(name, { round: String(i) }));
      expect((await readB<Claim>(tenant, `${COLLECTION}/${name}`)).metadata.resourceVersion).toBe(created.metadata.resourceVersion);
      const updated = await write('PATCH', name, { metadata: { labels: { round: `${i}-updated` } } });
      const read = await readB<Claim>(tenant, `${COLLECTION}/${name}`);
      expect([read.metadata.resourceVersion, read.metadata.labels?.['round']]).toEqual([updated.metadata.resourceVersion, `${i}-updated`]);
      await write('DELETE', name);
      const gone = await readB<{ reason: string; message: string }>(tenant, `${COLLECTION}/${name}`, 404);
      expect([gone.reason, gone.message]).toEqual(['NotFound', `hostclaims.tenancy.metal3.io "${name}" not found`]);
    }
  }, 600_000);

  it("counts each of those reads' fence on the replica: answered from memory after asking the writer's watermark, without probing kube-apiserver", async () => {
    const records = 'hostclaimrecords.infra.tenancy.metal3.io';
    const fresh = `hostclaim_apiserver_consistent_read_fences_total{resource="${records}",result="fresh"}`;
    const probes = `hostclaim_apiserver_consistent_read_probes_total{resource="${records}"}`;
    const sampleB = async (series: string): Promise<number> => {
      const response = await replicaB.direct(admin, { path: '/metrics' });
      expectStatus(response, 200);
      const line = response.body.split('\n').find((l) => l.startsWith(`${series} `));
      if (line === undefined) throw new Error(`replica B exports no ${series}`);
      return Number(line.slice(series.length + 1));
    };
    const created = await write('POST', 'counted', claim('counted', {}));
    const before = [await sampleB(fresh), await sampleB(probes)];
    const reads = 5;
    for (let i = 0; i < reads; i++) expect((await readB<Claim>(tenant, `${COLLECTION}/counted`)).metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    // Each GET was answered from the cache, proven fresh by replica A's watermark (replica-watermarks.ts): no probe at all.
    // A round refused or unanswered (RBAC on /replicas/watermark, the pinned certificate) would have fallen back to probes.
    expect([(await sampleB(fresh)) - (before[0] ?? 0), (await sampleB(probes)) - (before[1] ?? 0)]).toEqual([reads, 0]);
    await write('DELETE', 'counted');
  });

  it('LIST: namespace, label selector, one name and all namespaces, after create, update and delete', async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      const name = `list-${i}`;
      const created = await write('POST', name, claim(name, { round: String(i) }));
      const own = `${name}@${created.metadata.resourceVersion}`;
      expect(seen(await readB<ClaimList>(tenant, COLLECTION), created)).toEqual([own]);
      expect(seen(await readB<ClaimList>(tenant, `${COLLECTION}?labelSelector=round%3D${i}`), created)).toEqual([own]);
      expect(seen(await readB<ClaimList>(tenant, `${COLLECTION}?fieldSelector=metadata.name%3D${name}`), created)).toEqual([own]);
      expect(seen(await readB<ClaimList>(admin, ALL), created)).toEqual([own]);

      const updated = await write('PATCH', name, { metadata: { labels: { round: `${i}-updated` } } });
      expect(seen(await readB<ClaimList>(tenant, `${COLLECTION}?labelSelector=round%3D${i}`), updated)).toEqual([]);
      expect(seen(await readB<ClaimList>(tenant, COLLECTION), updated)).toEqual([`${name}@${updated.metadata.resourceVersion}`]);

      await write('DELETE', name);
      const afterDelete = { metadata: { ...updated.metadata } };
      expect(seen(await readB<ClaimList>(tenant, COLLECTION), afterDelete)).toEqual([]);
      expect(seen(await readB<ClaimList>(admin, ALL), afterDelete)).toEqual([]);
    }
  }, 600_000);

  it('LIST NotOlderThan a write acknowledged by the other replica', async () => {
    for (let i = 0; i < 10; i++) {
      const name = `not-older-${i}`;
      const created = await write('POST', name, claim(name, {}));
      const rv = created.metadata.resourceVersion;
      const list = await readB<ClaimList>(tenant, `${COLLECTION}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
      expect(seen(list, created)).toEqual([`${name}@${rv}`]);
      await write('DELETE', name);
    }
  }, 300_000);

  it('paginates across replicas: a continue token issued by one is honoured by the other, and a changed one is refused', async () => {
    const names = ['page-a', 'page-b', 'page-c', 'page-d', 'page-e'];
    const created = new Map<string, string>();
    for (const name of names) created.set(name, (await write('POST', name, claim(name, { paged: 'yes' }))).metadata.resourceVersion);
    const pageOf = async (replica: RawClients, token: string | undefined): Promise<ClaimList> => {
      const query = `?labelSelector=paged%3Dyes&limit=2${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`;
      const response = await replica.direct(tenant, { path: `${COLLECTION}${query}` });
      expectStatus(response, 200);
      return response.json as ClaimList;
    };
    const first = await pageOf(replicaA, undefined);
    // Written after the first page: every later page still shows the list at the first page's resourceVersion.
    await write('PATCH', 'page-c', { metadata: { labels: { changed: 'yes' } } });
    await write('PATCH', 'page-e', { metadata: { labels: { changed: 'yes' } } });
    const second = await pageOf(replicaB, first.metadata.continue);
    const third = await pageOf(replicaA, second.metadata.continue);
    expect([first, second, third].map((page) => page.items.map((c) => c.metadata.name))).toEqual([['page-a', 'page-b'], ['page-c', 'page-d'], ['page-e']]);
    expect([...second.items, ...third.items].map((c) => c.metadata.resourceVersion)).toEqual(['page-c', 'page-d', 'page-e'].map((name) => created.get(name)));
    expect(third.metadata.continue ?? '').toBe('');
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);

    const token = first.metadata.continue ?? '';
    const changed = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    const refused = await replicaB.direct(tenant, { path: `${COLLECTION}?labelSelector=paged%3Dyes&limit=2&continue=${encodeURIComponent(changed)}` });
    expect([refused.status, (refused.json as { message: string }).message]).toEqual([400, 'invalid continue token: continue key is not valid']);
    for (const name of names) await write('DELETE', name);
  }, 120_000);
});

// ---- HardwareData ------------------------------------------------------------

const HOST = 'replica-host';
const HARDWAREDATA = `/apis/tenancy.metal3.io/v1alpha1/namespaces/${NAMESPACE}/hardwaredata/infra.${HOST}`;

interface Metadata {
  metadata: { resourceVersion: string; labels?: Record<string, string> };
}

async function installMetal3Crds(): Promise<void> {
  const modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  for (const crd of ['metal3.io_baremetalhosts.yaml', 'metal3.io_hostdeploypolicies.yaml']) {
    await env.controlPlane.applyFile(path.join(modCache, 'github.com/metal3-io/baremetal-operator@v0.13.2', 'config', 'base', 'crds', 'bases', crd));
  }
}

/** An update of the object at `objectPath` straight to kube-apiserver (acknowledged before the next read starts). */
async function updateLabels(objectPath: string, change: (labels: Record<string, string>) => void): Promise<string> {
  const object = await env.controlPlane.requestJson<Metadata>('GET', objectPath);
  const labels = { ...object.metadata.labels };
  change(labels);
  return (await env.controlPlane.requestJson<Metadata>('PUT', objectPath, { ...object, metadata: { ...object.metadata, labels } })).metadata.resourceVersion;
}

describe('a HardwareData GET right after a write, through the lagging replica', () => {
  it("sees the tenant namespace's labels and the host as written", async () => {
    await installMetal3Crds();
    const infra = await env.controlPlane.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'infra' } });
    if (infra.status !== 201 && infra.status !== 409) throw new Error(`creating namespace infra: ${infra.status} ${infra.body}`);
    await env.controlPlane.apply(
      JSON.stringify({
        apiVersion: 'metal3.io/v1alpha1',
        kind: 'HostDeployPolicy',
        metadata: { name: 'replica-gold', namespace: 'infra', annotations: { 'tenancy.metal3.io/shared-labels': 'round' } },
        spec: { hostClaimNamespaces: { hasLabels: [{ name: 'tier', value: 'gold' }] } },
      }),
    );
    await env.controlPlane.apply(
      JSON.stringify({
        apiVersion: 'metal3.io/v1alpha1',
        kind: 'BareMetalHost',
        metadata: { name: HOST, namespace: 'infra', labels: { round: 'start' } },
        spec: { online: false },
      }),
    );
    const namespacePath = `/api/v1/namespaces/${NAMESPACE}`;
    const hostPath = `/apis/metal3.io/v1alpha1/namespaces/infra/baremetalhosts/${HOST}`;
    await updateLabels(namespacePath, (labels) => (labels['tier'] = 'gold'));
    // Replica B's caches of the new CRDs: served once its informers found them.
    await pollUntil('replica B to serve the host', async () => ((await replicaB.direct(tenant, { path: HARDWAREDATA })).status === 200 ? true : undefined), { timeoutMs: 60_000 });

    for (let i = 0; i < ITERATIONS / 2; i++) {
      const hostRv = await updateLabels(hostPath, (labels) => (labels['round'] = String(i)));
      const afterHost = await readB<Metadata>(tenant, HARDWAREDATA);
      expect([afterHost.metadata.labels?.['round'], afterHost.metadata.resourceVersion]).toEqual([String(i), hostRv]);

      await updateLabels(namespacePath, (labels) => delete labels['tier']);
      const gone = await readB<{ reason: string }>(tenant, HARDWAREDATA, 404);
      expect(gone.reason).toBe('NotFound');

      const namespaceRv = await updateLabels(namespacePath, (labels) => (labels['tier'] = 'gold'));
      // The object's resourceVersion is its newest input's: the namespace just written.
      expect((await readB<Metadata>(tenant, HARDWAREDATA)).metadata.resourceVersion).toBe(namespaceRv);
    }
  }, 600_000);
});
