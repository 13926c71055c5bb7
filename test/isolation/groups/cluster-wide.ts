/**
 * Cluster-wide requests (no namespace in the path).
 *
 * TODAY a tenant has no cluster-scope grant, so every cluster-wide verb is
 * kube's 403 "at the cluster scope", through the aggregator and directly.
 * The `scope` branch (identity-scoped cluster-wide reads) changes the list
 * and watch cases for a tenant holding the opt-in grant: they then answer
 * 200 with only that tenant's namespaces. Those cases are marked
 * `CHANGES WITH SCOPE` in their names; the lead adapts them at merge.
 * An admin's cluster-wide list is the positive control.
 */
import { forbidden, namesOf, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { GROUP_PATH, type Actor, type Path, type Request } from '../world.js';

type Resource = 'hostclaims' | 'hardwaredata';

interface ClusterOperation {
  readonly label: string;
  readonly verb: string;
  readonly request: (collection: string) => Request;
  /** Reads the scope branch opens to a tenant with the grant. */
  readonly changesWithScope: boolean;
}

const operations: readonly ClusterOperation[] = [
  { label: 'list', verb: 'list', changesWithScope: true, request: (c) => ({ path: c }) },
  { label: 'list with limit', verb: 'list', changesWithScope: true, request: (c) => ({ path: `${c}?limit=1` }) },
  { label: 'watch', verb: 'watch', changesWithScope: true, request: (c) => ({ path: `${c}?watch=true&timeoutSeconds=1` }) },
  { label: 'list by namespace field selector', verb: 'list', changesWithScope: true, request: (c) => ({ path: `${c}?fieldSelector=metadata.namespace%3Dtenant-a` }) },
  { label: 'create', verb: 'create', changesWithScope: false, request: (c) => ({ method: 'POST', path: c, headers: { 'Content-Type': 'application/json' }, body: '{}' }) },
  { label: 'deletecollection', verb: 'deletecollection', changesWithScope: false, request: (c) => ({ method: 'DELETE', path: c }) },
];

function clusterCase(actor: Actor, via: Path, resource: Resource, operation: ClusterOperation): IsolationCase {
  const request = operation.request(`${GROUP_PATH}/${resource}`);
  const marker = operation.changesWithScope ? ' [CHANGES WITH SCOPE: 200 with own namespaces only]' : '';
  return {
    name: `${actor} (${via}) cluster-wide ${operation.label} ${resource}${marker}`,
    request: `${actor} via ${via}: ${request.method ?? 'GET'} ${request.path}`,
    // Today: no tenant holds a cluster-scope grant, so RBAC refuses (kube's words).
    expected: forbidden({ user: actor, verb: operation.verb, resource }),
    run: async (world) => statusOf(await world.as(actor, via, request)),
  };
}

const tenantCases: IsolationCase[] = (['tenant-a', 'tenant-b'] as const).flatMap((actor) =>
  (['aggregator', 'direct'] as const).flatMap((via) =>
    (['hostclaims', 'hardwaredata'] as const).flatMap((resource) =>
      operations.filter((operation) => via === 'aggregator' || operation.label !== 'list with limit').map((operation) => clusterCase(actor, via, resource, operation)),
    ),
  ),
);

const adminList = (path: string, expected: Outcome): IsolationCase => ({
  name: `admin cluster-wide GET ${path}`,
  request: `admin via aggregator: GET ${GROUP_PATH}${path}`,
  expected,
  run: async (world) => namesOf(await world.as('admin', 'aggregator', { path: `${GROUP_PATH}${path}` })),
});

const admin: IsolationCase[] = [
  adminList('/hostclaims?labelSelector=app', {
    code: 200,
    names: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two', 'tenant-b/bravo-one', 'tenant-b/bravo-two'],
  }),
  adminList('/hostclaims?labelSelector=app&fieldSelector=metadata.namespace%3Dtenant-b', { code: 200, names: ['tenant-b/bravo-one', 'tenant-b/bravo-two'] }),
  adminList('/hardwaredata', {
    code: 200,
    names: ['tenant-a/hosts-a.host-a', 'tenant-a/hosts-a.host-a2', 'tenant-a/hosts-a.host-a3', 'tenant-a/hosts-shared.host-s', 'tenant-b/hosts-b.host-b', 'tenant-b/hosts-shared.host-s'],
  }),
];

export const clusterWide: CaseGroup = { name: 'cluster-wide requests (today: 403 for tenants; see the scope branch)', cases: [...tenantCases, ...admin] };
