import { afterEach, describe, expect, it } from 'vitest';
import { SelectionPredicate } from '../../../src/api/rest/selection.js';
import type { ApiObject } from '../../../src/api/rest/types.js';
import { WatchHub } from '../../../src/api/rest/watch-hub.js';
import { ContinueTokens } from '../../../src/backing/continue-token.js';
import type { KubeClient, Representation, WatchEvent } from '../../../src/backing/kube-client.js';
import { RecordStore } from '../../../src/backing/record-store.js';
import { SharedInformerFactory } from '../../../src/backing/shared-informers.js';
import { hostClaimRecord, hostClaimStorageMapping } from '../../../src/resources/hostclaim/storage.js';

const mapping = hostClaimStorageMapping('hostclaim-system');
const gr = { group: 'tenancy.metal3.io', resource: 'hostclaims' };

function record(name: string, resourceVersion: string, namespace = 'tenant-a'): ApiObject {
  const stored = mapping.toBacking({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name }, spec: { poweredOn: false } }, namespace);
  return { ...stored, metadata: { ...stored.metadata, namespace: 'hostclaim-system', uid: `uid-${name}`, resourceVersion } };
}

/**
 * kube-apiserver as the record store sees it: the informer's list and watch
 * (the test pushes events), metadata-only probes answered from `truth` at
 * `revision`, and the direct reads the store falls back to, counted.
 */
class FakeKube {
  truth: ApiObject[] = [];
  revision = '10';
  readonly probes: Record<string, string | undefined>[] = [];
  directReads = 0;
  private send: ((event: WatchEvent<ApiObject>) => void) | undefined;

  list<T>(_path: string, query: Record<string, string | undefined>, representation: Representation): Promise<T> {
    if (representation === 'metadata') this.probes.push(query);
    const name = query['fieldSelector']?.replace('metadata.name=', '');
    const items = this.truth.filter((r) => name === undefined || r.metadata.name === name);
    return Promise.resolve({ metadata: { resourceVersion: this.revision }, items } as T);
  }

  watch<T>(_path: string, _query: unknown, onEvent: (event: WatchEvent<T>) => void, options: { signal?: AbortSignal } = {}): Promise<void> {
    this.send = onEvent as unknown as (event: WatchEvent<ApiObject>) => void;
    return new Promise((resolve) => options.signal?.addEventListener('abort', () => { resolve(); }));
  }

  get<T>(): Promise<T> {
    this.directReads++;
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
    const store = new RecordStore(client, factory, mapping, hostClaimRecord.plural, gr, new WatchHub({ resource: gr }), new ContinueTokens(Promise.resolve(new Uint8Array(32))));
    store.start();
    await settle();
    return store;
  }

  it('answers a GET from memory after probing only that record, metadata only', async () => {
    const kube = new FakeKube();
    kube.truth = [record('web', '5')];
    const store = await started(kube);
    const object = await store.get('tenant-a', 'web', undefined);
    expect([object.metadata.namespace, object.metadata.name, object.metadata.resourceVersion]).toEqual(['tenant-a', 'web', '5']);
    expect(kube.probes).toEqual([{ labelSelector: undefined, fieldSelector: 'metadata.name=tenant-a.web' }]);
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

  it('leaves paginated lists, and every read before the cache has synced, to kube-apiserver', async () => {
    const kube = new FakeKube();
    kube.truth = [record('a', '5')];
    const store = await started(kube);
    await store.list('tenant-a', { selection: SelectionPredicate.everything(), limit: '1' });
    expect([kube.probes.length, kube.directReads]).toEqual([0, 1]);
    const unstarted = new RecordStore(kube as unknown as KubeClient, new SharedInformerFactory(kube, { onError: () => undefined, onNotServed: () => undefined }), mapping, hostClaimRecord.plural, gr, new WatchHub({ resource: gr }), new ContinueTokens(Promise.resolve(new Uint8Array(32))));
    await unstarted.list('tenant-a', { selection: SelectionPredicate.everything() });
    expect([kube.probes.length, kube.directReads]).toEqual([0, 2]);
  });
});
