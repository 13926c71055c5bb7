import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/backing/informer.js';
import { KubeApiError } from '../../../src/backing/kube-client.js';
import { SharedInformerFactory, withoutManagedFields, type BackingResource, type ResourceEventHandler } from '../../../src/backing/shared-informers.js';
import { ControlledClient } from '../../support/controlled-client.js';

interface Labeled extends KubeObject {
  readonly metadata: KubeObject['metadata'] & { readonly labels?: Record<string, string> };
}

function object(name: string, resourceVersion: string, labels: Record<string, string> = {}): Labeled {
  return { metadata: { namespace: 'ns', name, resourceVersion, labels } };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** Every call a handler receives, as text. */
function recorder(withReplace: boolean): { readonly calls: string[]; readonly handler: ResourceEventHandler<Labeled> } {
  const calls: string[] = [];
  const name = (o: Labeled): string => `${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}`;
  return {
    calls,
    handler: {
      onAdd: (o, initial) => calls.push(`add ${name(o)}${initial ? ' initial' : ''}`),
      onUpdate: (old, o) => calls.push(`update ${name(old)} -> ${name(o)}`),
      onDelete: (o) => calls.push(`delete ${name(o)}`),
      onProgress: (rv) => calls.push(`progress ${rv}`),
      ...(withReplace ? { onReplace: (objects: readonly Labeled[], rv: string) => calls.push(`replace ${objects.map(name).join(',')} at ${rv}`) } : {}),
    },
  };
}

const resource: BackingResource = { path: '/apis/example.io/v1/things' };

describe('SharedInformerFactory', () => {
  let factory: SharedInformerFactory | undefined;
  afterEach(() => {
    factory?.stop();
  });

  function newFactory(client: ControlledClient, notServed: string[] = [], errors: string[] = []): SharedInformerFactory {
    factory = new SharedInformerFactory(client, {
      onError: (r, error) => errors.push(`${r.path}: ${String(error)}`),
      onNotServed: (r) => notServed.push(r.path),
    });
    return factory;
  }

  it('gives every reader the same informer, fed by one list and one watch', async () => {
    const client = new ControlledClient();
    const informers = newFactory(client);
    const first = informers.informerFor<Labeled>(resource);
    const second = informers.informerFor<Labeled>({ ...resource });
    await first.waitForSync();
    expect(second).toBe(first);
    expect(client.lists).toEqual([resource.path]);
    expect(informers.informerFor<Labeled>({ ...resource, representation: 'metadata' })).not.toBe(first);
  });

  it('refuses to serve one resource as both optional and required', () => {
    const informers = newFactory(new ControlledClient());
    informers.informerFor<Labeled>(resource);
    expect(() => informers.informerFor<Labeled>({ ...resource, optional: true })).toThrow(
      'shared informer /apis/example.io/v1/things: asked for as both optional and required',
    );
  });

  it('replays the current state to a handler registered late, as adds or as one replace', async () => {
    const client = new ControlledClient();
    client.state.set(resource.path, { items: [object('a', '5'), object('b', '6')], resourceVersion: '7' });
    const informer = newFactory(client).informerFor<Labeled>(resource);
    await informer.waitForSync();
    await settle();
    const adds = recorder(false);
    const mirror = recorder(true);
    informer.addEventHandler(adds.handler);
    informer.addEventHandler(mirror.handler);
    expect(adds.calls).toEqual(['add a@5 initial', 'add b@6 initial']);
    expect(mirror.calls).toEqual(['replace a@5,b@6 at 7']);
  });

  it('delivers watch events to every handler until it is removed', async () => {
    const client = new ControlledClient();
    client.state.set(resource.path, { items: [object('a', '5')], resourceVersion: '7' });
    const informer = newFactory(client).informerFor<Labeled>(resource);
    const first = recorder(false);
    const second = recorder(true);
    informer.addEventHandler(first.handler);
    const removeSecond = informer.addEventHandler(second.handler);
    await informer.waitForSync();
    await settle();
    client.push(resource.path, { type: 'MODIFIED', object: object('a', '8') });
    client.push(resource.path, { type: 'ADDED', object: object('c', '9') });
    removeSecond();
    client.push(resource.path, { type: 'DELETED', object: object('c', '10') });
    client.push(resource.path, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '11' } } });
    expect(first.calls).toEqual(['add a@5 initial', 'update a@5 -> a@8', 'add c@9', 'delete c@10', 'progress 11']);
    expect(second.calls).toEqual(['replace a@5 at 7', 'update a@5 -> a@8', 'add c@9']);
    expect(informer.lastSyncResourceVersion()).toBe('11');
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['a']);
  });

  it('keeps only what the transform leaves of listed and watched objects, and gives readers that', async () => {
    const client = new ControlledClient();
    const managed = (name: string, rv: string): Labeled =>
      ({ metadata: { ...object(name, rv, { app: 'x' }).metadata, managedFields: [{ manager: 'kubectl', operation: 'Update' }] } }) as Labeled;
    client.state.set(resource.path, { items: [managed('a', '5')], resourceVersion: '7' });
    const informer = newFactory(client).informerFor<Labeled>({ ...resource, transform: withoutManagedFields });
    const seen: unknown[] = [];
    informer.addEventHandler({ onAdd: (o) => seen.push(o), onUpdate: (_, o) => seen.push(o), onDelete: (o) => seen.push(o) });
    await informer.waitForSync();
    await settle();
    client.push(resource.path, { type: 'MODIFIED', object: managed('a', '8') });
    client.push(resource.path, { type: 'ADDED', object: managed('b', '9') });
    client.push(resource.path, { type: 'DELETED', object: managed('b', '10') });
    const plain = (name: string, rv: string): Labeled => object(name, rv, { app: 'x' });
    expect(seen).toEqual([plain('a', '5'), plain('a', '8'), plain('b', '9'), plain('b', '10')]);
    expect(informer.list()).toEqual([plain('a', '8')]);
    expect(informer.get('ns', 'a')).toEqual(plain('a', '8'));
  });

  it('refuses to serve one resource with two different transforms', () => {
    const informers = newFactory(new ControlledClient());
    informers.informerFor<Labeled>({ ...resource, transform: withoutManagedFields });
    expect(informers.informerFor<Labeled>({ ...resource, transform: withoutManagedFields })).toBe(informers.informerFor<Labeled>({ ...resource, transform: withoutManagedFields }));
    expect(() => informers.informerFor<Labeled>(resource)).toThrow('shared informer /apis/example.io/v1/things: asked for with two different transforms');
  });

  it('keeps custom indexes up to date, including an index added after the first list', async () => {
    const client = new ControlledClient();
    client.state.set(resource.path, { items: [object('a', '5', { team: 'x' }), object('b', '6', { team: 'y' })], resourceVersion: '7' });
    const informer = newFactory(client).informerFor<Labeled>(resource);
    await informer.waitForSync();
    await settle();
    informer.addIndexer('team', (o) => (o.metadata.labels?.['team'] === undefined ? [] : [o.metadata.labels['team']]));
    expect(informer.byIndex('team', 'x').map((o) => o.metadata.name)).toEqual(['a']);
    client.push(resource.path, { type: 'MODIFIED', object: object('b', '8', { team: 'x' }) });
    client.push(resource.path, { type: 'DELETED', object: object('a', '9', { team: 'x' }) });
    expect(informer.byIndex('team', 'x').map((o) => `${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}`)).toEqual(['b@8']);
    expect(informer.byIndex('team', 'y')).toEqual([]);
    expect(() => informer.byIndex('owner', 'x')).toThrow('shared informer /apis/example.io/v1/things: no index owner');
  });

  it('reads an optional resource kube-apiserver does not serve as empty and synced, reported once, for every reader alike', async () => {
    const client = new ControlledClient();
    client.listError = new KubeApiError(404, undefined);
    const notServed: string[] = [];
    const errors: string[] = [];
    const informer = newFactory(client, notServed, errors).informerFor<Labeled>({ ...resource, optional: true });
    const mirror = recorder(true);
    informer.addEventHandler(mirror.handler);
    await informer.waitForSync();
    await settle();
    expect(informer.hasSynced()).toBe(true);
    expect(informer.isAbsent()).toBe(true);
    expect(informer.isHealthy()).toBe(false);
    expect(informer.list()).toEqual([]);
    expect(mirror.calls).toEqual(['replace  at ']);
    expect(notServed).toEqual([resource.path]);
    expect(errors).toEqual([]);
  });

  it('does not count a required resource that is not served as synced', async () => {
    const client = new ControlledClient();
    client.listError = new KubeApiError(404, undefined);
    const errors: string[] = [];
    const informer = newFactory(client, [], errors).informerFor<Labeled>(resource);
    await settle();
    expect(informer.hasSynced()).toBe(false);
    expect(errors).toEqual([`${resource.path}: KubeApiError: kube-apiserver answered 404`]);
  });

  it('runs every handler when one throws, then fails the watch and reports the error', async () => {
    const client = new ControlledClient();
    client.state.set(resource.path, { items: [], resourceVersion: '7' });
    const errors: string[] = [];
    const informer = newFactory(client, [], errors).informerFor<Labeled>(resource);
    await informer.waitForSync();
    await settle();
    const after = recorder(false);
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('out of order');
      },
    });
    informer.addEventHandler(after.handler);
    client.push(resource.path, { type: 'ADDED', object: object('a', '8') });
    await settle();
    expect(after.calls).toEqual(['add a@8']);
    expect(errors).toEqual([`${resource.path}: Error: out of order`]);
    expect(informer.isHealthy()).toBe(false);
  });
});
