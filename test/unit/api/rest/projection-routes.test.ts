/**
 * The projection hook as the generic REST layer uses it, through the real
 * pipeline: GET, LIST (JSON and Table) and watch give each requester its
 * form, asking once per infrastructure namespace per request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadOnlyResource } from '../../../../src/api/rest/contracts.js';
import type { ResourceProjection } from '../../../../src/api/rest/projection.js';
import type { ReadableStore } from '../../../../src/api/rest/store.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { WatchHub } from '../../../../src/api/rest/watch-hub.js';
import { notFound } from '../../../../src/api/status.js';
import { Authorizer } from '../../../../src/auth/authorizer.js';
import { hardwareDataResource } from '../../../../src/resources/hardwaredata/descriptor.js';
import { json } from '../../../support/https-client.js';
import { startRouteServer, type RouteServer } from '../../../support/route-server.js';

const gr = { group: 'tenancy.metal3.io', resource: 'hardwaredata' };

function object(name: string, infra: string, rv: string): ApiObject {
  return { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HardwareData', metadata: { name, namespace: 'tenant-a', resourceVersion: rv }, spec: { infra, detail: 'tenant' } };
}
const objects = [object('infra-1.a', 'infra-1', '3'), object('infra-1.b', 'infra-1', '4'), object('infra-2.c', 'infra-2', '5')];

/** alice administers infra-1; nobody else administers anything. */
const asked: string[] = [];
const adminForms = new WeakMap<ApiObject, ApiObject>();
const projection: ResourceProjection = {
  infrastructureNamespace: (o) => (o['spec'] as { infra: string }).infra,
  forInfrastructureAdmin: (o) => {
    let admin = adminForms.get(o);
    if (admin === undefined) {
      admin = { ...o, spec: { ...(o['spec'] as object), detail: 'admin' } };
      adminForms.set(o, admin);
    }
    return admin;
  },
  infrastructureAccess: (user, namespace) => {
    asked.push(`${user.name} ${namespace}`);
    return Promise.resolve(user.name === 'alice' && namespace === 'infra-1');
  },
};

const hub = new WatchHub({ resource: gr });
hub.reset('5', objects);
const store: ReadableStore = {
  hub,
  get: (_namespace, name) => {
    const found = objects.find((o) => o.metadata.name === name);
    return found === undefined ? Promise.reject(notFound(gr, name)) : Promise.resolve(found);
  },
  list: () => Promise.resolve({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HardwareDataList', metadata: { resourceVersion: '5' }, items: objects }),
};
const detailColumn = { name: 'Detail', type: 'string' as const, description: 'What the reader sees.', priority: 0, value: (o: ApiObject) => (o['spec'] as { detail: string }).detail };
const resource: ReadOnlyResource = { access: 'read-only', strategy: { descriptor: hardwareDataResource, columns: [detailColumn], projection }, store };

let server: RouteServer;

beforeAll(async () => {
  server = await startRouteServer([resource], new Authorizer(() => Promise.resolve({ allowed: true, reason: '' })));
});

afterAll(async () => {
  await server.shutdown();
});

const collection = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hardwaredata';

function send(user: string, path: string, headers: Record<string, string> = {}) {
  return server.send('GET', path, { 'X-Remote-User': user, ...headers });
}

const details = (items: ApiObject[]): string[] => items.map((o) => `${o.metadata.name ?? ''} ${(o['spec'] as { detail: string }).detail}`);

describe('the projection hook', () => {
  it('gives GET each requester its form', async () => {
    asked.length = 0;
    expect(details([json(await send('alice', `${collection}/infra-1.a`)) as ApiObject])).toEqual(['infra-1.a admin']);
    expect(details([json(await send('alice', `${collection}/infra-2.c`)) as ApiObject])).toEqual(['infra-2.c tenant']);
    expect(details([json(await send('bob', `${collection}/infra-1.a`)) as ApiObject])).toEqual(['infra-1.a tenant']);
    expect(asked).toEqual(['alice infra-1', 'alice infra-2', 'bob infra-1']);
  });

  it('asks once per infrastructure namespace for a whole LIST, JSON or Table', async () => {
    asked.length = 0;
    const list = json(await send('alice', collection)) as { items: ApiObject[] };
    expect(details(list.items)).toEqual(['infra-1.a admin', 'infra-1.b admin', 'infra-2.c tenant']);
    expect(asked.sort()).toEqual(['alice infra-1', 'alice infra-2']);
    const table = json(await send('bob', collection, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })) as { rows: { cells: unknown[] }[] };
    expect(table.rows.map((row) => row.cells.slice(0, 2))).toEqual([
      ['infra-1.a', 'tenant'],
      ['infra-1.b', 'tenant'],
      ['infra-2.c', 'tenant'],
    ]);
    const adminTable = json(await send('alice', collection, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })) as { rows: { cells: unknown[] }[] };
    expect(adminTable.rows.map((row) => row.cells[1])).toEqual(['admin', 'admin', 'tenant']);
  });

  it('sends each watcher its form, asking once per infrastructure namespace for the watch', async () => {
    asked.length = 0;
    const watch = async (user: string): Promise<string[]> => {
      const res = await send(user, `${collection}?watch=1&resourceVersion=0&timeoutSeconds=1`);
      const events = res.body
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { type: string; object: ApiObject });
      return events.map((event) => `${event.type} ${details([event.object]).join('')}`);
    };
    expect(await watch('alice')).toEqual(['ADDED infra-1.a admin', 'ADDED infra-1.b admin', 'ADDED infra-2.c tenant']);
    expect(await watch('bob')).toEqual(['ADDED infra-1.a tenant', 'ADDED infra-1.b tenant', 'ADDED infra-2.c tenant']);
    expect(asked.sort()).toEqual(['alice infra-1', 'alice infra-2', 'bob infra-1', 'bob infra-2']);
  });
});
