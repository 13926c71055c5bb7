/**
 * Cluster-wide requests (no namespace in the path).
 *
 * The environment applies the opt-in grant (deploy/components/
 * cluster-wide-reads, in the dev overlay): kube-apiserver lets a tenant's
 * list and watch of all namespaces through, and this server narrows them to
 * the namespaces the tenant may read by its other RBAC (docs/architecture.md,
 * "Reads across namespaces"): exactly the tenant's own objects, through the
 * aggregator and directly, and nothing of the other tenant, even when a
 * field selector names it. Writes at the cluster scope stay kube's 403. An
 * admin's cluster-wide list is the positive control.
 */
import { forbidden, namesOf, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import type { RawResponse } from '../../support/raw-http.js';
import { GROUP_PATH, type Actor, type Path, type Request } from '../world.js';

type Resource = 'hostclaims' | 'hardwaredata';
type Tenant = 'tenant-a' | 'tenant-b';

/** What each tenant reads of each resource at this point of the suite (the admin's list below, split by namespace). */
const visible: Readonly<Record<Tenant, Readonly<Record<Resource, readonly string[]>>>> = {
  'tenant-a': {
    hostclaims: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two'],
    hardwaredata: ['tenant-a/hosts-a.host-a', 'tenant-a/hosts-a.host-a2', 'tenant-a/hosts-a.host-a3', 'tenant-a/hosts-shared.host-s'],
  },
  'tenant-b': {
    hostclaims: ['tenant-b/bravo-one', 'tenant-b/bravo-two'],
    hardwaredata: ['tenant-b/hosts-b.host-b', 'tenant-b/hosts-shared.host-s'],
  },
};

/** Claims are narrowed to the suite's seeded ones (label `app`), since other groups create and delete claims. */
const seeded = (resource: Resource): string => (resource === 'hostclaims' ? 'labelSelector=app' : '');
const query = (resource: Resource, ...parameters: string[]): string => [seeded(resource), ...parameters].filter((p) => p !== '').join('&');

interface ClusterOperation {
  readonly label: string;
  readonly request: (collection: string, resource: Resource) => Request;
  readonly expected: (actor: Tenant, resource: Resource) => Outcome;
  readonly outcome: (response: RawResponse) => Outcome;
}

const operations: readonly ClusterOperation[] = [
  {
    label: 'list',
    request: (c, r) => ({ path: `${c}?${query(r)}` }),
    expected: (actor, r) => ({ code: 200, names: visible[actor][r] }),
    outcome: namesOf,
  },
  {
    label: 'list with limit',
    request: (c, r) => ({ path: `${c}?${query(r, 'limit=1')}` }),
    // A narrowed list of all namespaces is served whole, as a server may (no continue token to replay across users).
    expected: (actor, r) => ({ code: 200, names: visible[actor][r], continue: '' }),
    outcome: (response) => ({ ...namesOf(response), continue: (response.json as { metadata?: { continue?: string } } | undefined)?.metadata?.continue ?? '' }),
  },
  {
    label: 'watch',
    request: (c, r) => ({ path: `${c}?${query(r, 'watch=true', 'timeoutSeconds=1')}` }),
    expected: (actor, r) => ({ code: 200, events: visible[actor][r].map((name) => `ADDED ${name}`) }),
    outcome: eventsOf,
  },
  {
    label: 'list by field selector metadata.namespace=tenant-a',
    request: (c, r) => ({ path: `${c}?${query(r, 'fieldSelector=metadata.namespace%3Dtenant-a')}` }),
    expected: (actor, r) => ({ code: 200, names: actor === 'tenant-a' ? visible[actor][r] : [] }),
    outcome: namesOf,
  },
];

const writes = [
  { label: 'create', verb: 'create', request: (c: string): Request => ({ method: 'POST', path: c, headers: { 'Content-Type': 'application/json' }, body: '{}' }) },
  { label: 'deletecollection', verb: 'deletecollection', request: (c: string): Request => ({ method: 'DELETE', path: c }) },
] as const;

/** A watch answer as code and its events' type and namespace/name, sorted. */
function eventsOf(response: RawResponse): Outcome {
  if (response.status !== 200) return statusOf(response);
  const events = response.body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; object: { metadata: { namespace?: string; name?: string } } })
    .map((event) => `${event.type} ${event.object.metadata.namespace ?? ''}/${event.object.metadata.name ?? ''}`);
  return { code: 200, events: events.sort() };
}

function readCase(actor: Tenant, via: Path, resource: Resource, operation: ClusterOperation): IsolationCase {
  const request = operation.request(`${GROUP_PATH}/${resource}`, resource);
  return {
    name: `${actor} (${via}) cluster-wide ${operation.label} ${resource}`,
    request: `${actor} via ${via}: ${request.method ?? 'GET'} ${request.path}`,
    expected: operation.expected(actor, resource),
    run: async (world) => operation.outcome(await world.as(actor, via, request)),
  };
}

function writeCase(actor: Actor, via: Path, resource: Resource, write: (typeof writes)[number]): IsolationCase {
  const request = write.request(`${GROUP_PATH}/${resource}`);
  return {
    name: `${actor} (${via}) cluster-wide ${write.label} ${resource}`,
    request: `${actor} via ${via}: ${request.method ?? 'GET'} ${request.path}`,
    // The opt-in grant is list and watch only: RBAC refuses (kube's words).
    expected: forbidden({ user: actor, verb: write.verb, resource }),
    run: async (world) => statusOf(await world.as(actor, via, request)),
  };
}

const tenantCases: IsolationCase[] = (['tenant-a', 'tenant-b'] as const).flatMap((actor) =>
  (['aggregator', 'direct'] as const).flatMap((via) =>
    (['hostclaims', 'hardwaredata'] as const).flatMap((resource) => [
      ...operations.filter((operation) => via === 'aggregator' || operation.label !== 'list with limit').map((operation) => readCase(actor, via, resource, operation)),
      ...writes.map((write) => writeCase(actor, via, resource, write)),
    ]),
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

export const clusterWide: CaseGroup = { name: 'cluster-wide requests (narrowed to the requester\'s namespaces)', cases: [...tenantCases, ...admin] };
