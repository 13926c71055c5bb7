/**
 * The commit guard: a write whose response kube could not encode, or that
 * asks for a connection upgrade, never reaches the store's write methods,
 * and what storage answers first (409 on create, 404 on delete) still wins.
 */
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { guardCommits } from '../../../../src/api/rest/commit-guard.js';
import type { WriteCall } from '../../../../src/api/rest/contracts.js';
import type { WritableStore } from '../../../../src/api/rest/store.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { WatchHub } from '../../../../src/api/rest/watch-hub.js';
import { ApiError, notFound } from '../../../../src/api/status.js';

const gr = { group: 'tenancy.metal3.io', resource: 'hostclaims' };
const claim = (name: string, finalizers?: string[]): ApiObject => ({
  apiVersion: 'tenancy.metal3.io/v1alpha1',
  kind: 'HostClaim',
  metadata: { name, namespace: 'tenant-a', resourceVersion: '5', ...(finalizers === undefined ? {} : { finalizers }) },
});

function fixture(verb: string, headers: Record<string, string>, stored: ApiObject[]) {
  const writes: string[] = [];
  const find = (name: string): ApiObject => {
    const found = stored.find((o) => o.metadata.name === name);
    if (found === undefined) throw notFound(gr, name);
    return found;
  };
  const store: WritableStore = {
    hub: new WatchHub({ resource: gr }),
    get: (_ns, name) => Promise.resolve().then(() => find(name)),
    list: () => Promise.resolve({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaimList', metadata: {}, items: stored }),
    create: (_ns, object) => (writes.push(`create ${object.metadata.name ?? ''}`), Promise.resolve({ object, warnings: [] })),
    update: (_ns, object) => (writes.push(`update ${object.metadata.name ?? ''}`), Promise.resolve({ object, warnings: [] })),
    apply: (_ns, name, object) => (writes.push(`apply ${name}`), Promise.resolve({ object, warnings: [] })),
    delete: (_ns, name) => (writes.push(`delete ${name}`), Promise.resolve({ kind: 'gone' as const, name })),
  };
  const call = {
    req: { headers } as unknown as Request,
    info: { verb },
    gr,
    resource: { access: 'read-write', store },
  } as unknown as WriteCall;
  return { store: guardCommits(call).resource.store, writes };
}

async function refusal(promise: Promise<unknown>): Promise<[number, string | undefined]> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return [error.code, error.reason];
    throw error;
  }
  throw new Error('expected a refusal');
}

const upgrade = { connection: 'keep-alive, Upgrade', upgrade: 'websocket' };
const metadataList = { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' };

describe('guardCommits', () => {
  it('passes a write without upgrade and with an encodable response to the store', async () => {
    const { store, writes } = fixture('create', { accept: 'application/json' }, []);
    await store.create('tenant-a', claim('new'), {});
    expect(writes).toEqual(['create new']);
  });

  it('refuses an upgrade with 400 right before the write, after storage has had its say', async () => {
    const create = fixture('create', upgrade, [claim('taken')]);
    expect(await refusal(create.store.create('tenant-a', claim('new'), {}))).toEqual([400, 'BadRequest']);
    expect(await refusal(create.store.create('tenant-a', claim('taken'), {}))).toEqual([409, 'AlreadyExists']);
    const remove = fixture('delete', upgrade, [claim('there')]);
    expect(await refusal(remove.store.delete('tenant-a', 'missing', {}))).toEqual([404, 'NotFound']);
    expect(await refusal(remove.store.delete('tenant-a', 'there', {}))).toEqual([400, 'BadRequest']);
    const update = fixture('update', upgrade, [claim('there')]);
    expect(await refusal(update.store.update('tenant-a', claim('there'), '', {}))).toEqual([400, 'BadRequest']);
    expect(await refusal(update.store.apply('tenant-a', 'there', claim('there'), '', {}))).toEqual([400, 'BadRequest']);
    expect([...create.writes, ...remove.writes, ...update.writes]).toEqual([]);
  });

  it('refuses a response kube could only fail to encode after writing, except a Status kube never converts', async () => {
    const update = fixture('update', metadataList, [claim('there')]);
    expect(await refusal(update.store.update('tenant-a', claim('there'), '', {}))).toEqual([406, 'NotAcceptable']);
    const pending = fixture('delete', metadataList, [claim('held', ['x'])]);
    expect(await refusal(pending.store.delete('tenant-a', 'held', {}))).toEqual([406, 'NotAcceptable']);
    const collection = fixture('deletecollection', { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' }, [claim('there')]);
    expect(await refusal(collection.store.delete('tenant-a', 'there', {}))).toEqual([406, 'NotAcceptable']);
    expect([...update.writes, ...pending.writes, ...collection.writes]).toEqual([]);
    // Deleted at once, the answer is a Status.
    const gone = fixture('delete', metadataList, [claim('there')]);
    await gone.store.delete('tenant-a', 'there', {});
    expect(gone.writes).toEqual(['delete there']);
  });
});
