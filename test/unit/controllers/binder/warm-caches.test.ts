/**
 * Every replica that runs the binder keeps the binder's caches, leader or
 * not: a new leader starts from synced caches, and taking leadership adds
 * no cluster-wide cache halfway through a process's life.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ListWatchClient } from '../../../../src/backing/informer.js';
import type { KubeClient, WatchEvent } from '../../../../src/backing/kube-client.js';
import { SharedInformerFactory, withoutManagedFields } from '../../../../src/backing/shared-informers.js';
import { metal3Resources } from '../../../../src/metal3/types.js';
import { Binder } from '../../../../src/controllers/binder/binder.js';
import { consumerIndex, copyIndex, recordIndexes } from '../../../../src/controllers/binder/indexes.js';
import { createLogger } from '../../../../src/observability/logger.js';

/** Answers every list empty and records which collections were listed. */
class RecordingClient implements ListWatchClient {
  readonly listed: string[] = [];

  list<T>(path: string): Promise<T> {
    this.listed.push(path);
    return Promise.resolve({ metadata: { resourceVersion: '1' }, items: [] } as T);
  }

  watch<T>(_path: string, _query: unknown, _onEvent: (event: WatchEvent<T>) => void, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    return new Promise((resolve) => options.signal?.addEventListener('abort', () => { resolve(); }));
  }
}

let factory: SharedInformerFactory | undefined;
afterEach(() => {
  factory?.stop();
});

describe('Binder.warmCaches', () => {
  it('starts the caches the binder reads, with the records indexed, before any leadership', async () => {
    const client = new RecordingClient();
    factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
    const binder = new Binder(client as unknown as KubeClient, factory, { storageNamespace: 'hostclaim-system' }, createLogger('silent'));
    // The binder writes nothing here: only its caches are asked for.
    binder.warmCaches();
    const records = factory.informerFor({ path: '/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords' });
    await records.waitForSync();
    // Asking again returns the started caches: each was listed once, by warmCaches.
    expect([...client.listed].sort()).toEqual(
      [
        '/api/v1/namespaces',
        '/api/v1/secrets',
        '/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords',
        '/apis/metal3.io/v1alpha1/baremetalhosts',
        '/apis/metal3.io/v1alpha1/hostdeploypolicies',
      ].sort(),
    );
    for (const index of Object.values(recordIndexes)) expect(records.byIndex(index.name, 'any')).toEqual([]);
    expect(factory.informerFor({ path: '/api/v1/secrets', representation: 'metadata', transform: withoutManagedFields }).byIndex(copyIndex.name, 'any')).toEqual([]);
    expect(factory.informerFor(metal3Resources.bareMetalHosts).byIndex(consumerIndex.name, 'any')).toEqual([]);
  });
});
