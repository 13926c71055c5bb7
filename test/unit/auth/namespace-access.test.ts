import { afterEach, describe, expect, it } from 'vitest';
import type { NamespaceAccess } from '../../../src/api/rest/namespace-scope.js';
import { ApiError } from '../../../src/api/status.js';
import type { Attributes, Decision } from '../../../src/auth/authorizer.js';
import type { KubeObject, ListWatchClient } from '../../../src/backing/informer.js';
import type { WatchEvent } from '../../../src/backing/kube-client.js';
import { SharedInformerFactory } from '../../../src/backing/shared-informers.js';
import { NamespaceAccessCache } from '../../../src/auth/namespace-access.js';
import { ScopedReadAuthorizer } from '../../../src/auth/scoped-read-authorizer.js';
import type { UserInfo } from '../../../src/api/user.js';

const rbac = '/apis/rbac.authorization.k8s.io/v1';
const group = 'tenancy.metal3.io';
const claims = { group, resource: 'hostclaims' };

/** Lists answer each path's objects; watches stay open until the test pushes events to a path. */
class RbacClient implements ListWatchClient {
  readonly state = new Map<string, KubeObject[]>();
  private readonly watchers = new Map<string, (event: WatchEvent<KubeObject>) => void>();

  list<T>(path: string): Promise<T> {
    return Promise.resolve({ metadata: { resourceVersion: '1' }, items: this.state.get(path) ?? [] } as T);
  }

  watch<T>(path: string, _query: unknown, onEvent: (event: WatchEvent<T>) => void, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    this.watchers.set(path, onEvent as unknown as (event: WatchEvent<KubeObject>) => void);
    return new Promise((resolve) => options.signal?.addEventListener('abort', () => { resolve(); }));
  }

  push(path: string, type: 'ADDED' | 'DELETED', object: KubeObject): void {
    this.watchers.get(path)?.({ type, object });
  }
}

const admin = { metadata: { name: 'admin', resourceVersion: '1' }, rules: [{ apiGroups: [group], resources: ['hostclaims'], verbs: ['get', 'list', 'watch'] }] };
const grant = {
  metadata: { name: 'reads', resourceVersion: '1', labels: { 'tenancy.metal3.io/cluster-wide-reads': 'true' } },
  rules: [{ apiGroups: [group], resources: ['hostclaims'], verbs: ['list', 'watch'] }],
};
const grantBinding = { metadata: { name: 'reads', resourceVersion: '1' }, roleRef: { kind: 'ClusterRole', name: 'reads' }, subjects: [{ kind: 'Group', name: 'tenants' }] };
const adminIn = (namespace: string, userName: string, rv = '1'): KubeObject =>
  ({ metadata: { namespace, name: `admin-${userName}`, resourceVersion: rv }, roleRef: { kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: userName }] }) as KubeObject;

const tenant: UserInfo = { name: 'alice', uid: '', groups: ['tenants', 'system:authenticated'], extra: {} };
const outsider: UserInfo = { name: 'webhook-user', uid: '', groups: ['system:authenticated'], extra: {} };

function resourceAttributes(verb: string, namespace: string, resource = 'hostclaims', subresource = ''): Attributes & { kind: 'resource' } {
  return { kind: 'resource', verb, group, version: 'v1alpha1', resource, subresource, namespace, name: '' };
}

let factory: SharedInformerFactory | undefined;
let cache: NamespaceAccessCache | undefined;
afterEach(() => {
  cache?.stop();
  factory?.stop();
});

function setUp(delegate: (user: UserInfo, attributes: Attributes) => Decision): { client: RbacClient; cache: NamespaceAccessCache; asked: string[] } {
  const client = new RbacClient();
  client.state.set(`${rbac}/clusterroles`, [admin, grant]);
  client.state.set(`${rbac}/clusterrolebindings`, [grantBinding]);
  client.state.set(`${rbac}/rolebindings`, [adminIn('t1', 'alice'), adminIn('t2', 'alice'), adminIn('t9', 'bob')]);
  factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
  const asked: string[] = [];
  cache = new NamespaceAccessCache(factory, (user, attributes) => {
    asked.push(`${user.name} ${attributes.verb} ${attributes.kind === 'resource' ? attributes.namespace : ''}`);
    return Promise.resolve(delegate(user, attributes));
  });
  return { client, cache, asked };
}

const sorted = (access: NamespaceAccess): string[] | 'all' => (access === 'all' ? 'all' : [...access].sort());

describe('NamespaceAccessCache', () => {
  it('answers a grant subject from RBAC alone, without asking a SubjectAccessReview', async () => {
    const { cache: access, asked } = setUp(() => ({ allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "reads"' }));
    expect(sorted(await access.namespaces(tenant, 'list', claims))).toEqual(['t1', 't2']);
    expect(await access.allowsNamespace(tenant, resourceAttributes('list', 't1'))).toEqual({ allowed: true, reason: '' });
    expect(await access.allowsNamespace(tenant, resourceAttributes('watch', 't9'))).toEqual({ allowed: false, reason: '' });
    expect(asked).toEqual([]);
  });

  it("takes a non-RBAC authorizer's allow for users the grant does not name, never an RBAC allow", async () => {
    const { cache: access, asked } = setUp((user, attributes) =>
      attributes.kind === 'resource' && attributes.namespace === 'w1' ? { allowed: true, reason: 'webhook says yes' } : { allowed: true, reason: 'RBAC: allowed by RoleBinding "x/w2"' },
    );
    expect(await access.allowsNamespace(outsider, resourceAttributes('list', 'w1'))).toEqual({ allowed: true, reason: 'webhook says yes' });
    expect(await access.allowsNamespace(outsider, resourceAttributes('list', 'w2'))).toEqual({ allowed: false, reason: '' });
    // At the cluster scope the one review decides between every namespace and RBAC's.
    expect(sorted(await access.namespaces(outsider, 'list', claims))).toEqual([]);
    expect(asked).toEqual(['webhook-user list w1', 'webhook-user list w2', 'webhook-user list ']);
  });

  it('tells subscribers the new namespaces after RBAC changes', async () => {
    const { client, cache: access } = setUp(() => ({ allowed: false, reason: '' }));
    expect(sorted(await access.namespaces(tenant, 'watch', claims))).toEqual(['t1', 't2']);
    const seen: (string[] | 'all')[] = [];
    const stop = access.subscribe(tenant, 'watch', claims, (next) => seen.push(sorted(next)));
    client.push(`${rbac}/rolebindings`, 'ADDED', adminIn('t3', 'alice', '2'));
    await expect.poll(() => seen).toEqual([['t1', 't2', 't3']]);
    expect(sorted(await access.namespaces(tenant, 'list', claims))).toEqual(['t1', 't2', 't3']);
    client.push(`${rbac}/rolebindings`, 'DELETED', adminIn('t1', 'alice', '3'));
    await expect.poll(() => seen).toEqual([['t1', 't2', 't3'], ['t2', 't3']]);
    stop();
    client.push(`${rbac}/rolebindings`, 'DELETED', adminIn('t2', 'alice', '4'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toHaveLength(2);
  });
});

describe('NamespaceAccessCache before RBAC could be listed', () => {
  it('answers 503 after waiting, instead of deciding without RBAC', async () => {
    const client = new RbacClient();
    client.list = <T>(): Promise<T> => Promise.reject(new Error('forbidden'));
    factory = new SharedInformerFactory(client, { onError: () => undefined, onNotServed: () => undefined });
    cache = new NamespaceAccessCache(factory, () => Promise.resolve({ allowed: true, reason: '' }), 50);
    const error = await cache.namespaces(tenant, 'list', claims).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).toStatus()).toMatchObject({ code: 503, reason: 'ServiceUnavailable', message: 'the authorization cache of RBAC is not synced yet' });
  });
});

describe('ScopedReadAuthorizer', () => {
  it('decides namespaced lists and watches of the served resources by the rule, and passes everything else to the delegate', async () => {
    const delegated: string[] = [];
    const { cache: access } = setUp(() => ({ allowed: false, reason: '' }));
    const authorizer = new ScopedReadAuthorizer(
      {
        authorize: (user, attributes) => {
          delegated.push(attributes.kind === 'resource' ? `${attributes.verb} ${attributes.resource}${attributes.subresource === '' ? '' : `/${attributes.subresource}`} ${attributes.namespace}` : attributes.path);
          return Promise.resolve({ allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "reads"' });
        },
      },
      access,
      [claims],
    );
    expect((await authorizer.authorize(tenant, resourceAttributes('list', 't9'))).allowed).toBe(false);
    expect((await authorizer.authorize(tenant, resourceAttributes('watch', 't2'))).allowed).toBe(true);
    expect(delegated).toEqual([]);
    for (const attributes of [
      resourceAttributes('list', ''),
      resourceAttributes('get', 't9'),
      resourceAttributes('delete', 't9'),
      resourceAttributes('list', 't9', 'pods'),
      resourceAttributes('get', 't9', 'hostclaims', 'status'),
    ]) {
      expect((await authorizer.authorize(tenant, attributes)).allowed).toBe(true);
    }
    expect(delegated).toEqual(['list hostclaims ', 'get hostclaims t9', 'delete hostclaims t9', 'list pods t9', 'get hostclaims/status t9']);
  });
});
