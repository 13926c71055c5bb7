/**
 * Label and field selectors give the same answer on every read path and
 * resourceVersion, for both kinds, through the real aggregator; and the same
 * answer as kube-apiserver serving HostClaim as a plain CRD (the reference,
 * test/support/reference-crd.ts), including the order of cluster-wide lists
 * (by storage key: tenant-a before tenant) and the 410s of a compacted
 * revision. The same objects exist three times, so one expectation serves
 * all three: HostClaims `infra.h1` (app=x), `infra.h2` (app=y), `infra.h3`
 * (no label) in namespaces `tenant` and `tenant-a` on our group and on the
 * reference, and BareMetalHosts infra/h1..h3 with the same labels, shared
 * by a HostDeployPolicy with both namespaces, whose HardwareData have those
 * names. The metal3 CRDs are installed as hardwaredata.test.ts does.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';
import { rawClients, type RawClients } from '../support/raw-http.js';
import { installReferenceCrd, REFERENCE_GROUP } from '../support/reference-crd.js';

const binDir = inject('controlPlaneBinDir');
const bmoModule = 'github.com/metal3-io/baremetal-operator@v0.13.2';
const metal3Crds = ['metal3.io_baremetalhosts.yaml', 'metal3.io_hostdeploypolicies.yaml'];
const populated = ['tenant', 'tenant-a'] as const;
const labelsOf: Record<string, Record<string, string>> = { 'infra.h1': { app: 'x' }, 'infra.h2': { app: 'y' }, 'infra.h3': {} };

/** The three collections under test: ours (both kinds) and the reference HostClaim CRD. */
const targets = [
  { name: 'HostClaim', base: '/apis/tenancy.metal3.io/v1alpha1', plural: 'hostclaims' },
  { name: 'reference HostClaim', base: `/apis/${REFERENCE_GROUP}/v1alpha1`, plural: 'hostclaims' },
  { name: 'HardwareData', base: '/apis/tenancy.metal3.io/v1alpha1', plural: 'hardwaredata' },
] as const;
type Target = (typeof targets)[number];

let env: DevEnvironment;
let raw: RawClients;

interface ListBody {
  metadata: { resourceVersion?: string; continue?: string };
  items: { metadata: { name: string; namespace: string; labels?: Record<string, string>; resourceVersion: string }; status?: { conditions?: { reason?: string }[] } }[];
}

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `selection-${process.pid}`), serverEntry: 'dist/src/main.js', binDir });
  raw = await rawClients(env);
  await installReferenceCrd(env);
  await installMetal3Crds();
  await env.controlPlane.requestJson('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant' } });
  for (const [name, labels] of Object.entries(labelsOf)) await createHost(name.slice('infra.'.length), labels);
  await env.controlPlane.apply(
    JSON.stringify({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HostDeployPolicy',
      metadata: { name: 'tenants', namespace: 'infra', annotations: { 'tenancy.metal3.io/shared-labels': 'app' } },
      spec: { hostClaimNamespaces: { names: [...populated] } },
    }),
  );
  // After hosts and policy, so the binder's first status on each claim is its last.
  for (const target of targets.slice(0, 2)) {
    for (const namespace of populated) {
      for (const [name, labels] of Object.entries(labelsOf)) {
        // A selector no host matches: the binder leaves these claims alone (beyond its status).
        await env.controlPlane.requestJson('POST', `${target.base}/namespaces/${namespace}/hostclaims`, {
          apiVersion: target.base.slice('/apis/'.length),
          kind: 'HostClaim',
          metadata: { name, labels },
          spec: { poweredOn: false, hostSelector: { matchLabels: { role: 'none' } } },
        });
      }
    }
  }
  // Every path must have everything: the caches, and the binder's first status on our claims (so nothing changes later).
  await pollUntil(
    'both kinds to be complete in the cache and the binder to have written every claim status',
    async () => {
      const claims = await adminList(targets[0], '?resourceVersion=0');
      const hardware = await adminList(targets[2], '?resourceVersion=0');
      const settled = claims.items.length === 6 && claims.items.every((c) => (c.status?.conditions ?? []).some((condition) => condition.reason === 'NoBareMetalHost'));
      return settled && hardware.items.length === 6 ? true : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 1000 },
  );
}, 240_000);

afterAll(async () => {
  await env.stop();
});

async function installMetal3Crds(): Promise<void> {
  const modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const files = metal3Crds.map((crd) => path.join(modCache, bmoModule, 'config', 'base', 'crds', 'bases', crd));
  for (const file of files) await env.controlPlane.applyFile(file);
  const waited = await env.controlPlane.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...files.flatMap((f) => ['-f', f])], {
    kubeconfig: env.adminKubeconfigPath,
  });
  if (waited.code !== 0) throw new Error(waited.stderr);
}

async function createHost(name: string, labels: Record<string, string>): Promise<void> {
  await env.controlPlane.apply(
    JSON.stringify({ apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name, namespace: 'infra', labels }, spec: { online: false } }),
  );
  const status = {
    operationalStatus: 'OK',
    errorCount: 0,
    errorMessage: '',
    poweredOn: false,
    provisioning: { state: 'available', ID: `ironic-${name}` },
    hardware: { cpu: { arch: 'x86_64', count: 8 }, ramMebibytes: 16384, hostname: name },
  };
  await mergePatch(`/apis/metal3.io/v1alpha1/namespaces/infra/baremetalhosts/${name}/status`, { status });
}

async function mergePatch(apiPath: string, body: unknown): Promise<void> {
  const response = await raw.viaAggregator(env.adminKubeconfigPath, {
    method: 'PATCH',
    path: apiPath,
    headers: { 'Content-Type': 'application/merge-patch+json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`PATCH ${apiPath}: ${response.status} ${response.body}`);
}

async function adminList(target: Target, query: string): Promise<ListBody> {
  return env.controlPlane.requestJson<ListBody>('GET', `${target.base}/${target.plural}${query}`);
}

interface Answer {
  readonly status: number;
  readonly keys: readonly string[];
  readonly reason?: string;
  readonly message?: string;
}

/** tenant-a through the aggregator for its namespace, admin for cluster-wide lists; every page, following continue. */
async function list(target: Target, namespace: string | undefined, query: Record<string, string>): Promise<Answer> {
  const keys: string[] = [];
  let next: Record<string, string> = query;
  for (;;) {
    const collection = namespace === undefined ? target.plural : `namespaces/${namespace}/${target.plural}`;
    const requestPath = `${target.base}/${collection}?${new URLSearchParams(next).toString()}`;
    const response =
      namespace === undefined ? await env.controlPlane.request('GET', requestPath) : await raw.viaAggregator(env.tenantKubeconfigPaths['tenant-a'], { path: requestPath });
    const body = JSON.parse(response.body) as ListBody & { reason?: string; message?: string };
    if (response.status !== 200) return { status: response.status, keys, ...(body.reason === undefined ? {} : { reason: body.reason }), ...(body.message === undefined ? {} : { message: body.message }) };
    keys.push(...body.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`));
    const token = body.metadata.continue;
    if (token === undefined || token === '') return { status: 200, keys };
    const { resourceVersion: _rv, resourceVersionMatch: _match, ...rest } = query;
    next = { ...rest, continue: token };
  }
}

/** The resourceVersion each target's cache is at (what an informer would have seen). */
async function currentResourceVersion(target: Target): Promise<string> {
  return (await adminList(target, '?resourceVersion=0')).metadata.resourceVersion ?? '';
}

/** Selection → what kube lists, in kube's order. */
const selections: readonly { query: Record<string, string>; namespace?: string; expected: string[] }[] = [
  { query: {}, namespace: 'tenant-a', expected: ['tenant-a/infra.h1', 'tenant-a/infra.h2', 'tenant-a/infra.h3'] },
  { query: { labelSelector: 'app=x' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h1'] },
  { query: { labelSelector: 'app!=x' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h2', 'tenant-a/infra.h3'] },
  { query: { labelSelector: '!app' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h3'] },
  { query: { labelSelector: 'app in (x,y)' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h1', 'tenant-a/infra.h2'] },
  { query: { fieldSelector: 'metadata.name=infra.h2' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h2'] },
  { query: { fieldSelector: 'metadata.name!=infra.h2', labelSelector: 'app' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h1'] },
  { query: { fieldSelector: 'metadata.namespace=tenant' }, namespace: 'tenant-a', expected: [] },
  { query: {}, expected: ['tenant-a/infra.h1', 'tenant-a/infra.h2', 'tenant-a/infra.h3', 'tenant/infra.h1', 'tenant/infra.h2', 'tenant/infra.h3'] },
  { query: { labelSelector: 'app=x' }, expected: ['tenant-a/infra.h1', 'tenant/infra.h1'] },
  { query: { fieldSelector: 'metadata.name=infra.h3' }, expected: ['tenant-a/infra.h3', 'tenant/infra.h3'] },
  { query: { fieldSelector: 'metadata.namespace=tenant', labelSelector: 'app' }, expected: ['tenant/infra.h1', 'tenant/infra.h2'] },
];

type ReadPath = (target: Target) => Promise<Record<string, string>>;
const readPaths: Record<string, ReadPath> = {
  'resourceVersion unset': () => Promise.resolve({}),
  'resourceVersion=0': () => Promise.resolve({ resourceVersion: '0' }),
  'resourceVersion=0 with limit=1': () => Promise.resolve({ resourceVersion: '0', limit: '1' }),
  'limit=1, then continue': () => Promise.resolve({ limit: '1' }),
  'a current resourceVersion': async (t) => ({ resourceVersion: await currentResourceVersion(t) }),
  'NotOlderThan a current resourceVersion': async (t) => ({ resourceVersion: await currentResourceVersion(t), resourceVersionMatch: 'NotOlderThan' }),
  'Exact at a current resourceVersion, limit=1': async (t) => ({ resourceVersion: await currentResourceVersion(t), resourceVersionMatch: 'Exact', limit: '1' }),
};

/**
 * kube-apiserver v1.36.3 repeats the first item of a cluster-wide list
 * narrowed by a metadata.namespace field selector when it is paginated
 * (observed here: tenant/infra.h1 twice). We do not copy that; the
 * reference is skipped for those requests only.
 */
function repeatsOnPages(namespace: string | undefined, query: Record<string, string>, pathQuery: Record<string, string>): boolean {
  return namespace === undefined && (query['fieldSelector'] ?? '').includes('metadata.namespace=') && pathQuery['limit'] !== undefined && pathQuery['resourceVersion'] !== '0';
}

describe('lists', () => {
  it.each(Object.entries(readPaths))('select the same objects with %s, on both kinds and the reference', async (_, readPath) => {
    for (const target of targets) {
      for (const { query, namespace, expected } of selections) {
        const what = `${target.name} ${namespace ?? 'all'} ${JSON.stringify(query)}`;
        // HardwareData keeps no past states: Exact needs the hub's resourceVersion of the moment (it moves with bookmarks), so retry once.
        const pathQuery = await readPath(target);
        if (target.name === 'reference HostClaim' && repeatsOnPages(namespace, query, pathQuery)) continue;
        let answer = await list(target, namespace, { ...query, ...pathQuery });
        if (answer.status === 410 && target.name === 'HardwareData') answer = await list(target, namespace, { ...query, ...(await readPath(target)) });
        expect(answer, what).toEqual({ status: 200, keys: expected });
      }
    }
  });
});

interface WatchEvent {
  type: string;
  object: { metadata: { name?: string; resourceVersion?: string; annotations?: Record<string, string> } };
}

async function watch(target: Target, query: Record<string, string>): Promise<string[]> {
  const requestPath = `${target.base}/namespaces/tenant-a/${target.plural}?${new URLSearchParams({ watch: 'true', timeoutSeconds: '3', ...query }).toString()}`;
  const response = await raw.viaAggregator(env.tenantKubeconfigPaths['tenant-a'], { path: requestPath, timeoutMs: 30_000 });
  expect(response.status, response.body).toBe(200);
  return response.body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as WatchEvent)
    // Periodic bookmarks come whenever the server likes (kube sends them on a slow machine too); only initial-events-end is part of the answer.
    .filter((e) => e.type !== 'BOOKMARK' || e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true')
    .map((e) => (e.type === 'BOOKMARK' ? 'BOOKMARK' : `${e.type} ${e.object.metadata.name ?? ''}`));
}

const initialEvents = { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' };

describe('watches', () => {
  it('select the same initial objects from every starting point', async () => {
    for (const target of targets) {
      const [unset, zero, watchList, byName] = await Promise.all([
        watch(target, { labelSelector: 'app=x' }),
        watch(target, { labelSelector: 'app=x', resourceVersion: '0' }),
        watch(target, { labelSelector: 'app=x', ...initialEvents }),
        watch(target, { fieldSelector: 'metadata.name=infra.h2', resourceVersion: '0' }),
      ]);
      expect({ unset, zero, watchList, byName }, target.name).toEqual({
        unset: ['ADDED infra.h1'],
        zero: ['ADDED infra.h1'],
        watchList: ['ADDED infra.h1', 'BOOKMARK'],
        byName: ['ADDED infra.h2'],
      });
    }
  });

  it('follow objects in and out of the selection after a resourceVersion', async () => {
    const start = new Map<Target, string>();
    for (const target of targets) start.set(target, await currentResourceVersion(target));
    // infra.h3 enters app=x, infra.h1 leaves it; claims first, hosts once the claim watches are done (see below).
    for (const target of targets.slice(0, 2)) {
      for (const namespace of populated) {
        for (const [name, labels] of [['infra.h3', { app: 'x' }], ['infra.h1', { app: null }]] as const) {
          await mergePatch(`${target.base}/namespaces/${namespace}/hostclaims/${name}`, { metadata: { labels } });
        }
      }
    }
    const expectations = async (target: Target) => {
      const from = start.get(target) ?? '';
      const [label, name, watchList] = await Promise.all([
        watch(target, { labelSelector: 'app=x', resourceVersion: from }),
        watch(target, { fieldSelector: 'metadata.name=infra.h3', resourceVersion: from }),
        watch(target, { labelSelector: 'app=x', ...initialEvents, resourceVersion: from }),
      ]);
      expect({ label, name, watchList }, target.name).toEqual({
        label: ['ADDED infra.h3', 'DELETED infra.h1'],
        name: ['MODIFIED infra.h3'],
        watchList: ['ADDED infra.h3', 'BOOKMARK'],
      });
    };
    await expectations(targets[0]);
    await expectations(targets[1]);
    // Changing hosts requeues waiting claims at the binder: only after the claim watches ended.
    for (const [name, labels] of [['h3', { app: 'x' }], ['h1', { app: null }]] as const) {
      await mergePatch(`/apis/metal3.io/v1alpha1/namespaces/infra/baremetalhosts/${name}`, { metadata: { labels } });
    }
    await pollUntil(
      'HardwareData to follow the host labels',
      async () => ((await list(targets[2], 'tenant-a', { labelSelector: 'app=x', resourceVersion: '0' })).keys.join() === 'tenant-a/infra.h3' ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    await expectations(targets[2]);
  });
});

describe('a compacted revision', () => {
  /*
   * kube-apiserver 1.36 serves Exact lists and continue tokens from its
   * watch cache's snapshots while they are recent, whatever etcd compacted;
   * only an older revision reaches etcd and gets 410. Revision 1 predates
   * every cache here.
   */
  it('answers an Exact list at a compacted revision with kube’s 410, selectors or not', async () => {
    const revision = (await adminList(targets[1], '')).metadata.resourceVersion ?? '';
    const compacted = await fetch(`${env.controlPlane.etcdUrl}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision, physical: true }) });
    expect(compacted.status).toBe(200);
    const answers = new Map<string, Answer>();
    for (const target of targets) {
      for (const query of [{}, { labelSelector: 'app' }, { fieldSelector: 'metadata.name=infra.h2' }] as Record<string, string>[]) {
        const answer = await list(target, 'tenant-a', { ...query, resourceVersion: '1', resourceVersionMatch: 'Exact' });
        answers.set(`${target.name} ${JSON.stringify(query)}`, answer);
        expect({ status: answer.status, reason: answer.reason, keys: answer.keys }, target.name).toEqual({ status: 410, reason: 'Expired', keys: [] });
      }
    }
    // HostClaim in the reference's words; HardwareData keeps no past states and says so as the watch cache does.
    for (const [what, answer] of answers) {
      expect(answer.message, what).toMatch(what.startsWith('HardwareData') ? /^too old resource version: 1 \(\d+\)$/ : /^The resourceVersion for the provided list is too old\.$/);
    }
  });
});
