/**
 * The generic REST layer with a read-only resource: reads are dispatched to
 * its store, every write verb is kube's 405, and a read-only resource that
 * declares a write verb is refused at construction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadOnlyResource } from '../../../../src/api/rest/contracts.js';
import type { ReadableStore } from '../../../../src/api/rest/store.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { WatchHub } from '../../../../src/api/rest/watch-hub.js';
import { notFound } from '../../../../src/api/status.js';
import { Authorizer } from '../../../../src/auth/authorizer.js';
import { hardwareDataStrategy } from '../../../../src/resources/hardwaredata/strategy.js';
import { tenancyV1alpha1 } from '../../../../src/resources/group.js';
import { restRouter } from '../../../../src/api/rest/handler.js';
import { json } from '../../../support/https-client.js';
import { everyNamespace } from '../../../support/read-access.js';
import { startRouteServer, type RouteServer } from '../../../support/route-server.js';

const gr = { group: 'tenancy.metal3.io', resource: 'hardwaredata' };
const object: ApiObject = {
  apiVersion: 'tenancy.metal3.io/v1alpha1',
  kind: 'HardwareData',
  metadata: { name: 'infra.h1', namespace: 'tenant-a', resourceVersion: '5' },
  spec: { hardware: { cpu: { arch: 'x86_64', count: 8 }, ramMebibytes: 16384 } },
};

const store: ReadableStore = {
  hub: new WatchHub({ resource: gr }),
  get: (namespace, name) => (namespace === 'tenant-a' && name === 'infra.h1' ? Promise.resolve(object) : Promise.reject(notFound(gr, name))),
  list: () => Promise.resolve({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HardwareDataList', metadata: { resourceVersion: '5' }, items: [object] }),
};
const strategy = hardwareDataStrategy(new Authorizer(() => Promise.resolve({ allowed: false, reason: '' })));
const resource: ReadOnlyResource = { access: 'read-only', strategy, store };

let server: RouteServer;

beforeAll(async () => {
  server = await startRouteServer([resource], new Authorizer(() => Promise.resolve({ allowed: false, reason: '' })));
});

afterAll(async () => {
  await server.shutdown();
});

const collection = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hardwaredata';

function send(method: string, path: string, headers: Record<string, string> = {}) {
  const admin = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
  return server.send(method, path, { ...admin, ...headers });
}

describe('a read-only resource', () => {
  it('serves get and list from its store, with Table output', async () => {
    expect(json(await send('GET', `${collection}/infra.h1`))).toEqual(object);
    const missing = await send('GET', `${collection}/infra.h2`);
    expect(missing.status).toBe(404);
    expect(json(missing)['message']).toBe('hardwaredata.tenancy.metal3.io "infra.h2" not found');
    const table = json(await send('GET', collection, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })) as { rows: { cells: unknown[] }[] };
    expect(table.rows[0]?.cells.slice(0, 6)).toEqual(['infra.h1', null, null, 'x86_64', 8, '16Gi']);
  });

  it('answers every write verb with kube’s 405', async () => {
    for (const [method, path] of [
      ['POST', collection],
      ['PUT', `${collection}/infra.h1`],
      ['PATCH', `${collection}/infra.h1`],
      ['DELETE', `${collection}/infra.h1`],
      ['DELETE', collection],
    ] as const) {
      const res = await send(method, path, { 'Content-Type': 'application/merge-patch+json' });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(json(res)).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' });
    }
  });

  it('may not declare a write verb it could never serve', () => {
    const dishonest: ReadOnlyResource = { ...resource, strategy: { ...strategy, descriptor: { ...strategy.descriptor, verbs: ['get', 'create'] } } };
    expect(() => restRouter(tenancyV1alpha1, [dishonest], everyNamespace)).toThrow('hardwaredata is read-only but declares create');
  });
});
