import { describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import { parseListParameters } from '../../../../src/api/rest/query.js';
import { WatchHub } from '../../../../src/api/rest/watch-hub.js';
import type { BareMetalHost, Namespace } from '../../../../src/metal3/types.js';
import { HardwareDataModel } from '../../../../src/resources/hardwaredata/model.js';
import { HardwareDataStore } from '../../../../src/resources/hardwaredata/store.js';
import { HardwareDataTokens } from '../../../../src/resources/hardwaredata/continue-token.js';

const gr = { group: 'tenancy.metal3.io', resource: 'hardwaredata' };

/**
 * A store over three namespaces and two hosts everyone sees; `keyByte` fills
 * the token key (replicas share one). `consistent` stands for the feed's
 * proof that every input is current; by default the model already is.
 */
function setup(keyByte = 0, consistent: (hub: WatchHub) => Promise<void> = () => Promise.resolve()): HardwareDataStore {
  const model = new HardwareDataModel(loadSchemaSource().resolvedObjectSchema('HardwareDataSpec'));
  const namespaces: Namespace[] = ['tenant', 'tenant-a', 'tenant-b'].map((name) => ({ metadata: { name, resourceVersion: '5' } }));
  model.visibility.replaceNamespaces(namespaces);
  model.visibility.replacePolicies([{ metadata: { namespace: 'infra', name: 'all', resourceVersion: '6' }, spec: { hostClaimNamespaces: {} } }]);
  const hosts: BareMetalHost[] = ['h1', 'h2'].map((name) => ({ metadata: { namespace: 'infra', name, uid: name, resourceVersion: '7' }, spec: {} }));
  model.replaceHosts(hosts);
  const hub = new WatchHub({ resource: gr, derivedState: model });
  hub.restart('40');
  return new HardwareDataStore({ hub, model, consistent: () => consistent(hub), consistentObject: () => Promise.resolve(undefined) }, gr, new HardwareDataTokens(Promise.resolve(new Uint8Array(32).fill(keyByte))));
}

function query(text: string) {
  const params = parseListParameters(new URLSearchParams(text));
  return { selection: params.selection, limit: params.limit, continue: params.continue, resourceVersion: params.resourceVersion, resourceVersionMatch: params.resourceVersionMatch };
}

const keys = (items: readonly { metadata: { namespace?: string; name?: string } }[]): string[] => items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);

describe('HardwareDataStore lists', () => {
  it('paginate a cluster-wide list in storage-key order, every page at the first page resourceVersion', async () => {
    const store = setup();
    const seen: string[] = [];
    let page = await store.list(undefined, query('limit=4'));
    seen.push(...keys(page.items));
    expect(page.items).toHaveLength(4);
    expect(page.metadata.resourceVersion).toBe('40');
    const token = page.metadata.continue ?? '';
    page = await store.list(undefined, query(`limit=4&continue=${token}`));
    seen.push(...keys(page.items));
    expect(page.metadata).toEqual({ resourceVersion: '40' });
    expect(seen).toEqual(['tenant-a/infra.h1', 'tenant-a/infra.h2', 'tenant-b/infra.h1', 'tenant-b/infra.h2', 'tenant/infra.h1', 'tenant/infra.h2']);
  });

  it('paginate a namespace with the selection applied before the limit, and ignore limit at resourceVersion 0', async () => {
    const store = setup();
    const first = await store.list('tenant-b', query('limit=1&fieldSelector=metadata.name!%3Dinfra.h1'));
    expect(keys(first.items)).toEqual(['tenant-b/infra.h2']);
    expect(first.metadata.continue).toBeUndefined();
    expect(keys((await store.list('tenant', query('limit=1&resourceVersion=0'))).items)).toEqual(['tenant/infra.h1', 'tenant/infra.h2']);
  });

  it('prove the inputs current for a resourceVersion beyond the model, as kube asks etcd for progress', async () => {
    // The feed's proof finds the inputs at 45 (a HostClaim write at 45 changed nothing HardwareData shows).
    let proofs = 0;
    const store = setup(0, (hub) => {
      proofs++;
      hub.progress('45');
      return Promise.resolve();
    });
    const list = await store.list('tenant', query('resourceVersion=45&resourceVersionMatch=NotOlderThan'));
    expect(list.metadata.resourceVersion).toBe('45');
    expect(proofs).toBe(1);
    // Reached already: no proof needed.
    await store.list('tenant', query('resourceVersion=44'));
    expect(proofs).toBe(1);
  });

  it('refuse a continue token issued for another list with kube 400', async () => {
    const store = setup();
    const token = (await store.list('tenant', query('limit=1'))).metadata.continue ?? '';
    await expect(store.list('tenant-a', query(`limit=1&continue=${token}`))).rejects.toMatchObject({ code: 400, message: 'invalid continue token: continue key is not valid: it was issued for another list' });
    await expect(store.list('tenant', query(`limit=1&labelSelector=x&continue=${token}`))).rejects.toMatchObject({ code: 400 });
    await expect(store.list('tenant', query('limit=1&continue=bm90LWpzb24'))).rejects.toMatchObject({ code: 400, message: 'invalid continue token: continue key is not valid' });
    // Sealed: opaque, and a changed token is refused.
    expect(Buffer.from(token.split('.').join(''), 'base64url').toString('latin1')).not.toContain('tenant');
    const changed = `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.slice(-1)}`;
    await expect(store.list('tenant', query(`limit=1&continue=${changed}`))).rejects.toMatchObject({ code: 400, message: 'invalid continue token: continue key is not valid' });
    // Another replica continues it (same key); one with another key does not.
    expect(keys((await setup().list('tenant', query(`limit=1&continue=${token}`))).items)).toEqual(['tenant/infra.h2']);
    await expect(setup(1).list('tenant', query(`limit=1&continue=${token}`))).rejects.toMatchObject({ code: 400, message: 'invalid continue token: continue key is not valid' });
  });

  it('answer a get from the model and 404 for what the tenant does not see', async () => {
    const store = setup();
    expect((await store.get('tenant', 'infra.h1', undefined)).metadata.resourceVersion).toBe('7');
    await expect(store.get('tenant', 'infra.h9', undefined)).rejects.toMatchObject({ code: 404, message: 'hardwaredata.tenancy.metal3.io "infra.h9" not found' });
  });
});
