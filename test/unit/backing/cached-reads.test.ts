import { afterEach, describe, expect, it } from 'vitest';
import { SelectionPredicate, selectableFields } from '../../../src/api/rest/selection.js';
import { parseFieldSelector } from '../../../src/api/field-selector.js';
import { parseLabelSelector } from '../../../src/api/label-selector.js';
import type { ApiObject, ObjectList } from '../../../src/api/rest/types.js';
import { WatchHub } from '../../../src/api/rest/watch-hub.js';
import { ContinueTokens } from '../../../src/backing/continue-token.js';
import type { KubeClient, ListRepresentation, WatchEvent } from '../../../src/backing/kube-client.js';
import { resourceVersionColumn } from '../../../src/backing/crd.js';
import type { Table } from '../../../src/backing/scope-probe.js';
import type { CollectionVersions } from '../../../src/backing/metadata-protobuf.js';
import { RecordStore } from '../../../src/backing/record-store.js';
import { SharedInformerFactory } from '../../../src/backing/shared-informers.js';
import { hostClaimRecord } from '../../../src/tenancy/claim-record.js';
import { hostClaimStorageMapping } from '../../../src/resources/hostclaim/storage.js';
import { metal3Resources } from '../../../src/metal3/types.js';

const mapping = hostClaimStorageMapping('hostclaim-system');
const gr = { group: 'tenancy.metal3.io', resource: 'hostclaims' };

function record(name: string, resourceVersion: string, namespace = 'tenant-a'): ApiObject {
  const stored = mapping.toBacking({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name }, spec: { poweredOn: false } }, namespace);
  return { ...stored, metadata: { ...stored.metadata, namespace: 'hostclaim-system', uid: `uid-${name}`, resourceVersion } };
}

/**
 * kube-apiserver as the record store sees it: the informer's list and watch
 * (the test pushes events), probes (a Table of names and resourceVersions,
 * or metadata only) answered from `truth` at `revision`, and the direct
 * reads the store falls back to, counted.
 */
class FakeKube {
  truth: ApiObject[] = [];
  revision = '10';
  /** Each probe LIST's selectors (a Table, or metadata only). */
  readonly probes: Record<string, string | undefined>[] = [];
  /** Each probe LIST's representation, with its includeObject. */
  readonly probeRequests: string[] = [];
  /** Whether the CRD has the resourceVersion printer column (false: as before the upgrade). */
  resourceVersionColumn = true;
  directReads = 0;
  private send: ((event: WatchEvent<ApiObject>) => void) | undefined;

  list<T>(_path: string, query: Record<string, string | undefined>, representation: ListRepresentation): Promise<T> {
    if (representation !== 'full') {
      this.probeRequests.push(`${representation} ${query['includeObject'] ?? ''}`.trim());
      this.probes.push({ labelSelector: query['labelSelector'], fieldSelector: query['fieldSelector'] });
    }
    const name = query['fieldSelector']?.replace('metadata.name=', '');
    const items = this.truth.filter((r) => name === undefined || r.metadata.name === name);
    if (representation === 'table') return Promise.resolve(this.table(items) as T);
    return Promise.resolve({ metadata: { resourceVersion: this.revision }, items } as T);
  }

  async listVersions(path: string, query: Record<string, string | undefined>): Promise<CollectionVersions> {
    const list = await this.list<ObjectList>(path, query, 'metadata');
    return {
      resourceVersion: list.metadata.resourceVersion ?? '',
      items: list.items.map(({ metadata }) => ({ namespace: metadata.namespace ?? '', name: metadata.name ?? '', resourceVersion: metadata.resourceVersion ?? '' })),
    };
  }

  /** As kube-apiserver answers `as=Table` with includeObject=None: cells in column order, no objects. */
  private table(items: readonly ApiObject[]): Table {
    const columns = [{ name: 'Name', format: 'name' }, { name: 'Age', format: '' }];
    if (!this.resourceVersionColumn) return { metadata: { resourceVersion: this.revision }, columnDefinitions: columns, rows: items.map((r) => ({ cells: [r.metadata.name, '1m'] })) };
    return {
      metadata: { resourceVersion: this.revision },
      columnDefinitions: [...columns, { name: resourceVersionColumn.name, format: '' }],
      rows: items.map((r) => ({ cells: [r.metadata.name, '1m', r.metadata.resourceVersion] })),
    };
  }

  watch<T>(_path: string, _query: unknown, onEvent: (event: WatchEvent<T>) => void, options: { signal?: AbortSignal } = {}): Promise<void> {
    this.send = onEvent as unknown as (event: WatchEvent<ApiObject>) => void;
    return new Promise((resolve) => options.signal?.addEventListener('abort', () => { resolve(); }));
  }

  readonly directQueries: (Record<string, string | undefined> | undefined)[] = [];

  get<T>(_path?: string, query?: Record<string, string | undefined>): Promise<T> {
    this.directReads++;
    this.directQueries.push(query);
    return Promise.resolve({ metadata: { resourceVersion: this.revision }, items: this.truth } as T);
  }

  /** A write kube-apiserver has acknowledged; its event reaches the informer only when `deliver` is called. */
  write(object: ApiObject): () => void {
    this.truth = [...this.truth.filter((r) => r.metadata.name !== object.metadata.name), object];
    this.revision = object.metadata.resourceVersion ?? this.revision;
    return () => this.send?.({ type: 'MODIFIED', object });
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('HostClaim reads from memory', () => {
  let factory: SharedInformerFactory | undefined;
  afterEach(() => factory?.stop());

  async function started(kube: FakeKube): Promise<RecordStore> {
    const client = kube as unknown as KubeClient;
    factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
    const store = new RecordStore(client, factory, mapping, hostClaimRecord.plural, gr, new WatchHub({ resource: gr }), new ContinueTokens(Promise.resolve(new Uint8Array(32))), metal3Resources.namespaces);
    store.start();
    await settle();
    return store;
  }

  it('answers a GET from memory after probing only that record, as a Table of names and resourceVersions', async () => {
    const kube = new FakeKube();
    kube.truth = [record('web', '5')];
    const store = await started(kube);
    const object = await store.get('tenant-a', 'web', undefined);
    expect([object.metadata.namespace, object.metadata.name, object.metadata.resourceVersion]).toEqual(['tenant-a', 'web', '5']);
    expect(kube.probes).toEqual([{ labelSelector: undefined, fieldSelector: 'metadata.name=tenant-a.web' }]);
    expect(kube.probeRequests).toEqual(['table None']);
    expect(kube.directReads).toBe(0);
  });

  it('probes metadata only when the Table lacks the resourceVersion column (a CRD not yet upgraded), with the same outcome', async () => {
    const kube = new FakeKube();
    kube.resourceVersionColumn = false;
    kube.truth = [record('web', '5')];
    const store = await started(kube);
    const deliver = kube.write(record('web', '12'));
    const read = store.get('tenant-a', 'web', undefined);
    await settle();
    // The metadata probe saw the write at 12: the read waits for its event.
    deliver();
    expect((await read).metadata.resourceVersion).toBe('12');
    const probe = { labelSelector: undefined, fieldSelector: 'metadata.name=tenant-a.web' };
    expect([kube.probes, kube.probeRequests]).toEqual([[probe, probe], ['table None', 'metadata']]);
    expect(kube.directReads).toBe(0);
  });

  it('waits for the event of a write acknowledged before the read, and never answers the older state', async () => {
    const kube = new FakeKube();
    kube.truth = [record('web', '5')];
    const store = await started(kube);
    const deliver = kube.write(record('web', '12'));
    const read = store.get('tenant-a', 'web', undefined);
    await settle();
    deliver();
    expect((await read).metadata.resourceVersion).toBe('12');
    expect(kube.directReads).toBe(0);
  });

  it('lists a namespace from memory at the probe resourceVersion, probing the namespace label', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5'), record('b', '6')];
    kube.revision = '40';
    const store = await started(kube);
    const list = await store.list('tenant-a', { selection: SelectionPredicate.everything() });
    expect([list.metadata.resourceVersion, list.items.map((o) => o.metadata.name)]).toEqual(['40', ['a', 'b']]);
    expect(kube.probes).toEqual([{ labelSelector: 'infra.tenancy.metal3.io/namespace=tenant-a', fieldSelector: undefined }]);
    expect(kube.directReads).toBe(0);
  });

  it('probes the namespaces listed while a probe is in flight together, with the next probe', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5'), record('b', '6', 'tenant-b'), record('c', '7', 'tenant-c')];
    kube.revision = '40';
    const store = await started(kube);
    const everything = { selection: SelectionPredicate.everything() };
    const lists = await Promise.all(['tenant-a', 'tenant-b', 'tenant-c'].map((namespace) => store.list(namespace, everything)));
    expect(lists.map((list) => [list.metadata.resourceVersion, list.items.map((o) => o.metadata.name)])).toEqual([
      ['40', ['a']],
      ['40', ['b']],
      ['40', ['c']],
    ]);
    expect(kube.probes).toEqual([
      { labelSelector: 'infra.tenancy.metal3.io/namespace=tenant-a', fieldSelector: undefined },
      { labelSelector: 'infra.tenancy.metal3.io/namespace in (tenant-b,tenant-c)', fieldSelector: undefined },
    ]);
    expect(kube.directReads).toBe(0);
  });

  it('lists several namespaces together behind one probe of exactly those namespaces', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5'), record('b', '6', 'tenant-b'), record('c', '7', 'tenant-c')];
    kube.revision = '40';
    const store = await started(kube);
    const list = await store.listNamespaces(['tenant-c', 'tenant-a'], { selection: SelectionPredicate.everything() });
    expect([list?.metadata.resourceVersion, list?.items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`)]).toEqual(['40', ['tenant-a/a', 'tenant-c/c']]);
    expect(kube.probes).toEqual([{ labelSelector: 'infra.tenancy.metal3.io/namespace in (tenant-a,tenant-c)', fieldSelector: undefined }]);
    expect(kube.directReads).toBe(0);
    // resourceVersion "0": the cache as it is, no probe.
    const cached = await store.listNamespaces(['tenant-b'], { selection: SelectionPredicate.everything(), resourceVersion: '0' });
    expect([cached?.items.map((o) => o.metadata.name), kube.probes.length]).toEqual([['b'], 1]);
  });

  it('serves NotOlderThan a resourceVersion the cache has reached without any probe', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5')];
    const store = await started(kube);
    const list = await store.list('tenant-a', { selection: SelectionPredicate.everything(), resourceVersion: '8', resourceVersionMatch: 'NotOlderThan' });
    expect([list.metadata.resourceVersion, list.items.length, kube.probes.length, kube.directReads]).toEqual(['10', 1, 0, 0]);
  });

  it('pages a consistent list from memory: every page at the first page\'s resourceVersion, later pages from its snapshot', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5'), record('b', '6'), record('c', '7')];
    kube.revision = '40';
    const store = await started(kube);
    const first = await store.list('tenant-a', { selection: SelectionPredicate.everything(), limit: '2' });
    expect([first.metadata.resourceVersion, first.items.map((o) => o.metadata.name), first.metadata.remainingItemCount]).toEqual(['40', ['a', 'b'], 1]);
    expect(first.metadata.continue).toMatch(/^[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+$/);
    // A write after the first page: the next page still shows the list as it was at 40.
    kube.write(record('c', '41'))();
    await settle();
    const second = await store.list('tenant-a', { selection: SelectionPredicate.everything(), limit: '2', continue: first.metadata.continue });
    expect([second.metadata.resourceVersion, second.items.map((o) => `${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}`), second.metadata.continue]).toEqual([
      '40',
      ['c@7'],
      undefined,
    ]);
    expect([kube.probes.length, kube.directReads]).toEqual([1, 0]);
    // While a new list sees the write.
    const fresh = await store.list('tenant-a', { selection: SelectionPredicate.everything(), limit: '5' });
    expect([fresh.metadata.resourceVersion, fresh.items.map((o) => o.metadata.resourceVersion)]).toEqual(['41', ['5', '6', '41']]);
  });

  it('counts the remaining objects only when nothing is selected, and pages what the selection matches', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5'), record('b', '6'), record('c', '7')];
    const store = await started(kube);
    const selection = new SelectionPredicate(parseLabelSelector(''), parseFieldSelector('metadata.name!=b', selectableFields));
    const first = await store.list('tenant-a', { selection, limit: '1' });
    expect([first.items.map((o) => o.metadata.name), first.metadata.remainingItemCount]).toEqual([['a'], undefined]);
    const second = await store.list('tenant-a', { selection, limit: '1', continue: first.metadata.continue });
    expect([second.items.map((o) => o.metadata.name), second.metadata.continue]).toEqual([['c'], undefined]);
    // The token is bound to its list: another label selector is kube's 400.
    const otherList = new SelectionPredicate(parseLabelSelector('x=y'), parseFieldSelector('', selectableFields));
    await expect(store.list('tenant-a', { selection: otherList, limit: '1', continue: first.metadata.continue })).rejects.toMatchObject({ code: 400 });
  });

  it("reads a page whose snapshot it does not hold from kube-apiserver, at the token's resourceVersion after its last object", async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5'), record('b', '6')];
    kube.revision = '40';
    const first = await (await started(kube)).list('tenant-a', { selection: SelectionPredicate.everything(), limit: '1' });
    // Another replica: the same key, no snapshot.
    factory?.stop();
    const other = await started(kube);
    await other.list('tenant-a', { selection: SelectionPredicate.everything(), limit: '1', continue: first.metadata.continue });
    const kubeToken = kube.directQueries.at(-1)?.['continue'] ?? '';
    expect(JSON.parse(Buffer.from(kubeToken, 'base64url').toString('utf8'))).toEqual({ v: 'meta.k8s.io/v1', rv: 40, start: '/tenant-a.a\u0000' });
    expect(kube.directReads).toBe(1);
  });

  it('leaves Exact lists, a limit with a resourceVersion, and every read before the cache has synced, to kube-apiserver', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5')];
    const store = await started(kube);
    await store.list('tenant-a', { selection: SelectionPredicate.everything(), limit: '1', resourceVersion: '5' });
    await store.list('tenant-a', { selection: SelectionPredicate.everything(), resourceVersion: '5', resourceVersionMatch: 'Exact' });
    expect([kube.probes.length, kube.directReads]).toEqual([0, 2]);
    const unstarted = new RecordStore(kube as unknown as KubeClient, new SharedInformerFactory(kube, { onError: () => undefined, onNotServed: () => undefined }), mapping, hostClaimRecord.plural, gr, new WatchHub({ resource: gr }), new ContinueTokens(Promise.resolve(new Uint8Array(32))), metal3Resources.namespaces);
    await unstarted.list('tenant-a', { selection: SelectionPredicate.everything() });
    expect([kube.probes.length, kube.directReads]).toEqual([0, 3]);
  });
});
