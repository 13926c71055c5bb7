/**
 * One selection for every read path, through the generic REST layer (HTTP in,
 * real router, real stores of both kinds): label and field selectors give
 * the same answer whether a list is served from kube-apiserver (a fake that
 * applies only the namespace label, so the predicate must decide), from the
 * in-memory hub (resourceVersion=0), with NotOlderThan or Exact, and for
 * watches from every starting point. Follows k8s.io/apiserver's
 * storage.SelectionPredicate tests in spirit (pkg/storage/selection_predicate_test.go)
 * and the ordering of its watch cache (store_btree.go: by key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import type { RestResource } from '../../../../src/api/rest/contracts.js';
import { parseListParameters } from '../../../../src/api/rest/query.js';
import { SelectionPredicate } from '../../../../src/api/rest/selection.js';
import type { ReadableStore } from '../../../../src/api/rest/store.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { WatchHub } from '../../../../src/api/rest/watch-hub.js';
import { Authorizer } from '../../../../src/auth/authorizer.js';
import { KubeApiError, type KubeClient } from '../../../../src/backing/kube-client.js';
import { SharedInformerFactory } from '../../../../src/backing/shared-informers.js';
import { ContinueTokens } from '../../../../src/backing/continue-token.js';
import { RecordStore } from '../../../../src/backing/record-store.js';
import { metal3Paths, metal3Resources, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../../../src/metal3/types.js';
import { HardwareDataModel } from '../../../../src/resources/hardwaredata/model.js';
import { HardwareDataStore } from '../../../../src/resources/hardwaredata/store.js';
import { HardwareDataTokens } from '../../../../src/resources/hardwaredata/continue-token.js';
import { hardwareDataStrategy } from '../../../../src/resources/hardwaredata/strategy.js';
import { hostClaimRecord } from '../../../../src/tenancy/claim-record.js';
import { hostClaimStorageMapping } from '../../../../src/resources/hostclaim/storage.js';
import { hostClaimStrategy } from '../../../../src/resources/hostclaim/strategy.js';
import { sharedLabelsAnnotation } from '../../../../src/tenancy/policy.js';
import { json } from '../../../support/https-client.js';
import { startRouteServer, type RouteServer } from '../../../support/route-server.js';

const currentRv = '100';
const tooOldMessage = 'The resourceVersion for the provided list is too old.';

/** Every namespace has infra.h1 (app=x), infra.h2 (app=y) and infra.h3 (no label), except tenant-b, which has nothing. */
const populated = ['tenant', 'tenant-a'];
const objectLabels: Record<string, Record<string, string>> = { 'infra.h1': { app: 'x' }, 'infra.h2': { app: 'y' }, 'infra.h3': {} };

// ---- a kube-apiserver that knows records, hosts, policies and namespaces ----

type Query = Readonly<Record<string, string | undefined>> | undefined;

class FakeKube {
  readonly recordQueries: Query[] = [];
  records: ApiObject[] = [];

  constructor(private readonly recordsPath: string) {}

  get<T>(path: string, query?: Query): Promise<T> {
    return Promise.resolve(this.answer(path, query) as T);
  }

  private answer(path: string, query: Query): unknown {
    if (path === this.recordsPath) return this.recordList(query);
    if (path === metal3Paths.bareMetalHosts) return list(hosts.filter((h) => fieldsMatch(h, query?.['fieldSelector'])));
    if (path === metal3Paths.hostDeployPolicies) return list([policy].filter((p) => fieldsMatch(p, query?.['fieldSelector'])));
    if (path === metal3Paths.namespaces) return list(namespaces.filter((n) => fieldsMatch(n, query?.['fieldSelector'])));
    throw new Error(`unexpected GET ${path}`);
  }

  /** Applies only the namespace label (the first requirement), so any other selection left to the predicate shows. */
  private recordList(query: Query): unknown {
    this.recordQueries.push(query);
    if (query?.['resourceVersionMatch'] === 'Exact' && query['resourceVersion'] !== currentRv) {
      throw new KubeApiError(410, { kind: 'Status', code: 410, reason: 'Expired', message: tooOldMessage });
    }
    const [namespaceTerm = ''] = (query?.['labelSelector'] ?? '').split(',');
    const [, namespace] = namespaceTerm.split('=');
    const label = 'infra.tenancy.metal3.io/namespace';
    const records = this.records.filter((r) => (namespace === undefined ? r.metadata.labels?.[label] !== undefined : r.metadata.labels?.[label] === namespace));
    // In storage-key (record name) order, as etcd returns them.
    return list(records.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1)));
  }
}

function list(items: readonly unknown[]): unknown {
  return { metadata: { resourceVersion: currentRv }, items };
}

/** metadata.name= and metadata.namespace= terms, as the store sends them. */
function fieldsMatch(object: { metadata: { name: string; namespace?: string } }, selector: string | undefined): boolean {
  return (selector ?? '')
    .split(',')
    .filter((term) => term !== '')
    .every((term) => {
      const [field, value] = term.split('=');
      return field === 'metadata.name' ? object.metadata.name === value : object.metadata.namespace === value;
    });
}

const namespaces: Namespace[] = ['tenant', 'tenant-a', 'tenant-b'].map((name) => ({ metadata: { name, labels: {} } }));
const policy: HostDeployPolicy = {
  metadata: { name: 'p', namespace: 'infra', annotations: { [sharedLabelsAnnotation]: 'app' } },
  spec: { hostClaimNamespaces: { names: populated } },
};
const hosts: BareMetalHost[] = Object.entries(objectLabels).map(([name, labels]) => ({
  apiVersion: 'metal3.io/v1alpha1',
  kind: 'BareMetalHost',
  metadata: { name: name.slice('infra.'.length), namespace: 'infra', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2026-01-02T03:04:05Z', labels },
  spec: { online: false },
  status: { hardware: { cpu: { arch: 'x86_64', count: 8 }, ramMebibytes: 16384 }, provisioning: { state: 'available' } },
}));

// ---- both kinds, served by the real router ----

const mapping = hostClaimStorageMapping('hostclaim-system');
const kube = new FakeKube(`/apis/${hostClaimRecord.group}/${hostClaimRecord.version}/namespaces/hostclaim-system/${hostClaimRecord.plural}`);
const client = kube as unknown as KubeClient;
const claimGr = { group: 'tenancy.metal3.io', resource: 'hostclaims' };
const hardwareGr = { group: 'tenancy.metal3.io', resource: 'hardwaredata' };
// Never started: no shared cache, so every read with resourceVersion unset goes to the fake kube-apiserver.
const unstartedInformers = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
const claims = new RecordStore(client, unstartedInformers, mapping, hostClaimRecord.plural, claimGr, new WatchHub({ resource: claimGr }), new ContinueTokens(Promise.resolve(new Uint8Array(32))), metal3Resources.namespaces);
const model = new HardwareDataModel(loadSchemaSource().resolvedObjectSchema('HardwareDataSpec'));
const hardwareHub = new WatchHub({ resource: hardwareGr, derivedState: model });
const hardware = new HardwareDataStore({ hub: hardwareHub, model, consistent: () => Promise.resolve(), consistentObject: () => Promise.resolve(undefined) }, hardwareGr, new HardwareDataTokens(Promise.resolve(new Uint8Array(32))));
const authorizer = new Authorizer(() => Promise.resolve({ allowed: false, reason: '' }));
const resources: RestResource[] = [
  { access: 'read-write', strategy: hostClaimStrategy(authorizer), store: claims },
  { access: 'read-only', strategy: hardwareDataStrategy(authorizer), store: hardware },
];
const kinds = [
  { plural: 'hostclaims', store: claims as ReadableStore, tooOld: tooOldMessage },
  { plural: 'hardwaredata', store: hardware as ReadableStore, tooOld: `too old resource version: 1 (${currentRv})` },
] as const;

function claim(namespace: string, name: string): ApiObject {
  const labels = objectLabels[name] ?? {};
  const virtual: ApiObject = { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name, ...(Object.keys(labels).length === 0 ? {} : { labels }) }, spec: {} };
  const record = mapping.toBacking(virtual, namespace);
  return { ...record, metadata: { ...record.metadata, uid: `uid-${namespace}-${name}`, resourceVersion: '50' } };
}

let server: RouteServer;

beforeAll(async () => {
  kube.records = populated.flatMap((namespace) => Object.keys(objectLabels).map((name) => claim(namespace, name)));
  // The claims hub holds what a fresh read returns, as its informer would; HardwareData is computed from its inputs.
  claims.hub.reset(currentRv, (await claims.list(undefined, { selection: SelectionPredicate.everything() })).items);
  model.replaceHosts(hosts);
  model.visibility.replacePolicies([policy]);
  model.visibility.replaceNamespaces(namespaces);
  hardwareHub.restart(currentRv);

  server = await startRouteServer(resources, authorizer, 50);
});

afterAll(async () => {
  await server.shutdown();
});

function get(path: string) {
  const admin = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
  return server.send('GET', path, admin);
}

function path(plural: string, namespace: string | undefined, query: Record<string, string>): string {
  const collection = namespace === undefined ? plural : `namespaces/${namespace}/${plural}`;
  return `/apis/tenancy.metal3.io/v1alpha1/${collection}?${new URLSearchParams(query).toString()}`;
}

async function listKeys(plural: string, namespace: string | undefined, query: Record<string, string>): Promise<string[]> {
  const response = await get(path(plural, namespace, query));
  expect(response.status, `${plural} ${JSON.stringify(query)}: ${response.body}`).toBe(200);
  return (json(response)['items'] as ApiObject[]).map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
}

const readPaths: Record<string, Record<string, string>> = {
  'resourceVersion unset': {},
  'resourceVersion=0': { resourceVersion: '0' },
  'resourceVersion=0 with a limit': { resourceVersion: '0', limit: '500' },
  'a current resourceVersion': { resourceVersion: currentRv },
  'NotOlderThan a current resourceVersion': { resourceVersion: currentRv, resourceVersionMatch: 'NotOlderThan' },
  'Exact at the current resourceVersion': { resourceVersion: currentRv, resourceVersionMatch: 'Exact' },
  'a limit': { limit: '500' },
};

/** Selection in tenant-a (or cluster-wide) → exactly what kube would list, in kube's order. */
const selections: readonly { query: Record<string, string>; namespace?: string; expected: string[] }[] = [
  { query: {}, namespace: 'tenant-a', expected: ['tenant-a/infra.h1', 'tenant-a/infra.h2', 'tenant-a/infra.h3'] },
  { query: { labelSelector: 'app=x' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h1'] },
  { query: { labelSelector: 'app!=x' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h2', 'tenant-a/infra.h3'] },
  { query: { labelSelector: '!app' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h3'] },
  { query: { labelSelector: 'app in (x,y)' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h1', 'tenant-a/infra.h2'] },
  { query: { fieldSelector: 'metadata.name=infra.h2' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h2'] },
  { query: { fieldSelector: 'metadata.name!=infra.h2', labelSelector: 'app' }, namespace: 'tenant-a', expected: ['tenant-a/infra.h1'] },
  { query: { fieldSelector: 'metadata.namespace=tenant' }, namespace: 'tenant-a', expected: [] },
  { query: { labelSelector: 'app=x' }, namespace: 'tenant-b', expected: [] },
  // Cluster-wide: by storage key, so tenant-a (with '-') before tenant (with '/').
  { query: { labelSelector: 'app=x' }, expected: ['tenant-a/infra.h1', 'tenant/infra.h1'] },
  { query: { fieldSelector: 'metadata.name=infra.h3' }, expected: ['tenant-a/infra.h3', 'tenant/infra.h3'] },
  { query: { fieldSelector: 'metadata.namespace=tenant', labelSelector: 'app' }, expected: ['tenant/infra.h1', 'tenant/infra.h2'] },
];

describe('SelectionPredicate', () => {
  const parse = (label: string, field: string) => parseListParameters(new URLSearchParams({ labelSelector: label, fieldSelector: field })).selection;
  const object = (labels?: Record<string, string>): ApiObject => ({ metadata: { namespace: 'tenant-a', name: 'c-1', ...(labels === undefined ? {} : { labels }) } });

  it('matches labels and the name and namespace fields together', () => {
    expect(parse('app=x', 'metadata.name=c-1').matches(object({ app: 'x' }))).toBe(true);
    expect(parse('app=x', 'metadata.name=c-1').matches(object())).toBe(false);
    expect(parse('app=x', 'metadata.namespace=tenant-b').matches(object({ app: 'x' }))).toBe(false);
    expect(parse('!app', '').matches(object())).toBe(true);
  });

  it('tells what it pins, and when it selects everything', () => {
    expect(parse('', 'metadata.name=c-1,metadata.namespace=tenant-a').matchesSingle()).toBe('c-1');
    expect(parse('', 'metadata.name=c-1,metadata.namespace=tenant-a').matchesSingleNamespace()).toBe('tenant-a');
    expect(parse('', 'metadata.name!=c-1').matchesSingle()).toBeUndefined();
    expect(parse('', '').empty()).toBe(true);
    expect(SelectionPredicate.everything().empty()).toBe(true);
    expect(parse('app', '').empty()).toBe(false);
  });

  it('refuses a reserved label key with a 400, after the selector parsed', () => {
    expect(() => parse('infra.tenancy.metal3.io/namespace=tenant-b', '')).toThrow('unable to parse requirement: label key "infra.tenancy.metal3.io/namespace" uses a reserved prefix');
    expect(() => parse('a=b c', '')).toThrow("found 'c', expected: ',' or 'end of string'");
  });
});

describe.each(kinds)('$plural lists', ({ plural, tooOld }) => {
  it.each(Object.entries(readPaths))('select the same objects with %s', async (_, readPath) => {
    for (const { query, namespace, expected } of selections) {
      expect(await listKeys(plural, namespace, { ...query, ...readPath }), `${namespace ?? 'all'} ${JSON.stringify(query)}`).toEqual(expected);
    }
  });

  it('answers an Exact list at a resourceVersion no longer kept with 410 Expired, selectors or not', async () => {
    for (const query of [{}, { labelSelector: 'app=x' }] as Record<string, string>[]) {
      const response = await get(path(plural, 'tenant-a', { ...query, resourceVersion: '1', resourceVersionMatch: 'Exact' }));
      expect(response.status).toBe(410);
      expect(json(response)).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410, message: tooOld });
    }
  });
});

describe('what reaches kube-apiserver', () => {
  it('is the namespace label and the canonical label selector, and the record name for a name selector', async () => {
    kube.recordQueries.length = 0;
    await listKeys('hostclaims', 'tenant-a', { labelSelector: 'app in (y,x),  tier', fieldSelector: 'metadata.name=infra.h1' });
    await listKeys('hostclaims', undefined, { labelSelector: '!app' });
    expect(kube.recordQueries.map((q) => [q?.['labelSelector'], q?.['fieldSelector']])).toEqual([
      ['infra.tenancy.metal3.io/namespace=tenant-a,app in (x,y),tier', 'metadata.name=tenant-a.infra.h1'],
      ['infra.tenancy.metal3.io/namespace,!app', undefined],
    ]);
  });
});

interface WatchLine {
  type: string;
  object: ApiObject;
}

const watchStarts: Record<string, Record<string, string>> = {
  'resourceVersion unset': {},
  'resourceVersion=0': { resourceVersion: '0' },
  'a current resourceVersion': { resourceVersion: currentRv },
  'sendInitialEvents': { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' },
  'sendInitialEvents from a current resourceVersion': {
    sendInitialEvents: 'true',
    resourceVersionMatch: 'NotOlderThan',
    allowWatchBookmarks: 'true',
    resourceVersion: currentRv,
  },
};

/** What each start shows for app=x in tenant-a while infra.h3 gains app=x and infra.h1 loses it. */
const expectedWatch: Record<string, string[]> = {
  'resourceVersion unset': ['ADDED infra.h1', 'ADDED infra.h3', 'DELETED infra.h1'],
  'resourceVersion=0': ['ADDED infra.h1', 'ADDED infra.h3', 'DELETED infra.h1'],
  'a current resourceVersion': ['ADDED infra.h3', 'DELETED infra.h1'],
  'sendInitialEvents': ['ADDED infra.h1', `BOOKMARK ${currentRv}`, 'ADDED infra.h3', 'DELETED infra.h1'],
  'sendInitialEvents from a current resourceVersion': ['ADDED infra.h1', `BOOKMARK ${currentRv}`, 'ADDED infra.h3', 'DELETED infra.h1'],
};

describe.each(kinds)('$plural watches', ({ plural, store }) => {
  it('apply the selection from every starting point, with transitions in and out of it', async () => {
    const starts = Object.entries(watchStarts);
    const watches = starts.map(([, start]) =>
      get(path(plural, 'tenant-a', { watch: 'true', timeoutSeconds: '2', labelSelector: 'app=x', ...start })),
    );
    await waitFor(() => store.hub.stats().watchers === starts.length);
    const relabelled = (name: string, labels: Record<string, string>, rv: number): ApiObject => {
      const current = store.hub.get('tenant-a', name);
      if (current === undefined) throw new Error(`no ${name}`);
      return { ...current, metadata: { ...current.metadata, labels, resourceVersion: String(rv) } };
    };
    const publish = (name: string, labels: Record<string, string>, rv: number): void => {
      const object = relabelled(name, labels, rv);
      // HardwareData's hub is derived: its feed gives the change's position and previous state.
      if (plural === 'hardwaredata') store.hub.publish({ type: 'MODIFIED', object }, { resourceVersion: String(rv), prev: store.hub.get('tenant-a', name) });
      else store.hub.publish({ type: 'MODIFIED', object });
    };
    publish('infra.h3', { app: 'x' }, 101);
    publish('infra.h2', { app: 'z' }, 102);
    publish('infra.h1', {}, 103);
    const answers = await Promise.all(watches);
    starts.forEach(([name], i) => {
      const lines = (answers[i]?.body ?? '').split('\n').filter((line) => line !== '');
      const events = lines.map((line) => JSON.parse(line) as WatchLine).map((e) =>
        e.type === 'BOOKMARK' ? `BOOKMARK ${e.object.metadata.resourceVersion ?? ''}` : `${e.type} ${e.object.metadata.name ?? ''}`,
      );
      expect(events, name).toEqual(expectedWatch[name]);
    });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}
