/**
 * Every verb and subresource of both kinds, by a tenant on the other
 * tenant's namespace, through the aggregator and directly: kube-apiserver
 * refuses before proxying (RBAC), and the server refuses the same request
 * sent to it directly (its own SubjectAccessReview), both with kube's 403
 * naming only what the requester sent. Whether the object exists makes no
 * difference (no existence oracle). In the requester's own namespace, a host
 * it may not see is 404, exactly like one that does not exist.
 */
import { claimBody, contentTypes, forbidden, namesOf, notFound, objectOf, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { claimsOf } from '../inventory.js';
import { GROUP_PATH, type Actor, type Path, type Request } from '../world.js';

type Resource = 'hostclaims' | 'hardwaredata';

interface Operation {
  readonly label: string;
  readonly verb: string;
  readonly subresource?: string;
  /** Whether kube's RequestInfo carries a name (and so the 403 message names it). */
  readonly named: boolean;
  readonly request: (collection: string, name: string, resource: Resource) => Request;
}

const json = (contentType: string, body: string): Pick<Request, 'headers' | 'body'> => ({ headers: { 'Content-Type': contentType }, body });
const objectBody = (resource: Resource, name: string): string =>
  resource === 'hostclaims' ? claimBody(name) : JSON.stringify({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HardwareData', metadata: { name } });

const writes: readonly Operation[] = [
  { label: 'create', verb: 'create', named: false, request: (c, _n, r) => ({ method: 'POST', path: c, ...json(contentTypes.json, objectBody(r, 'planted')) }) },
  { label: 'update', verb: 'update', named: true, request: (c, n, r) => ({ method: 'PUT', path: `${c}/${n}`, ...json(contentTypes.json, objectBody(r, n)) }) },
  { label: 'merge patch', verb: 'patch', named: true, request: (c, n) => ({ method: 'PATCH', path: `${c}/${n}`, ...json(contentTypes.merge, '{"metadata":{"labels":{"x":"y"}}}') }) },
  { label: 'JSON patch', verb: 'patch', named: true, request: (c, n) => ({ method: 'PATCH', path: `${c}/${n}`, ...json(contentTypes.jsonPatch, '[{"op":"add","path":"/metadata/labels/x","value":"y"}]') }) },
  { label: 'strategic merge patch', verb: 'patch', named: true, request: (c, n) => ({ method: 'PATCH', path: `${c}/${n}`, ...json(contentTypes.strategic, '{"metadata":{"labels":{"x":"y"}}}') }) },
  { label: 'server-side apply', verb: 'patch', named: true, request: (c, n, r) => ({ method: 'PATCH', path: `${c}/${n}?fieldManager=intruder&force=true`, ...json(contentTypes.apply, objectBody(r, n)) }) },
  { label: 'delete', verb: 'delete', named: true, request: (c, n) => ({ method: 'DELETE', path: `${c}/${n}` }) },
  { label: 'deletecollection', verb: 'deletecollection', named: false, request: (c) => ({ method: 'DELETE', path: c }) },
];

const reads: readonly Operation[] = [
  { label: 'get', verb: 'get', named: true, request: (c, n) => ({ path: `${c}/${n}` }) },
  { label: 'list', verb: 'list', named: false, request: (c) => ({ path: c }) },
  { label: 'watch', verb: 'watch', named: false, request: (c) => ({ path: `${c}?watch=true&timeoutSeconds=1` }) },
  { label: 'watch one by field selector', verb: 'watch', named: true, request: (c, n) => ({ path: `${c}?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3D${n}` }) },
];

const statusOperations: readonly Operation[] = [
  { label: 'get status', verb: 'get', subresource: 'status', named: true, request: (c, n) => ({ path: `${c}/${n}/status` }) },
  { label: 'update status', verb: 'update', subresource: 'status', named: true, request: (c, n) => ({ method: 'PUT', path: `${c}/${n}/status`, ...json(contentTypes.json, claimBody(n)) }) },
  {
    label: 'merge patch status',
    verb: 'patch',
    subresource: 'status',
    named: true,
    request: (c, n) => ({ method: 'PATCH', path: `${c}/${n}/status`, ...json(contentTypes.merge, '{"status":{"bareMetalHost":{"namespace":"hosts-a","name":"host-a"}}}') }),
  },
  {
    label: 'JSON patch status',
    verb: 'patch',
    subresource: 'status',
    named: true,
    request: (c, n) => ({ method: 'PATCH', path: `${c}/${n}/status`, ...json(contentTypes.jsonPatch, '[{"op":"add","path":"/status/poweredOn","value":true}]') }),
  },
  {
    label: 'apply status',
    verb: 'patch',
    subresource: 'status',
    named: true,
    request: (c, n) => ({ method: 'PATCH', path: `${c}/${n}/status?fieldManager=intruder`, ...json(contentTypes.apply, claimBody(n)) }),
  },
];

const operationsOf: Record<Resource, readonly Operation[]> = {
  hostclaims: [...reads, ...writes, ...statusOperations],
  // HardwareData is read-only and has no status: RBAC refuses before anything knows that.
  hardwaredata: [...reads, ...writes, statusOperations[0] as Operation],
};

interface Crossing {
  readonly actor: Actor;
  readonly via: Path;
  readonly namespace: 'tenant-a' | 'tenant-b';
  readonly names: Record<Resource, string>;
}

const crossings: readonly Crossing[] = [
  { actor: 'tenant-a', via: 'aggregator', namespace: 'tenant-b', names: { hostclaims: 'bravo-one', hardwaredata: 'hosts-b.host-b' } },
  { actor: 'tenant-a', via: 'direct', namespace: 'tenant-b', names: { hostclaims: 'bravo-one', hardwaredata: 'hosts-b.host-b' } },
  { actor: 'tenant-b', via: 'aggregator', namespace: 'tenant-a', names: { hostclaims: 'alpha-one', hardwaredata: 'hosts-a.host-a' } },
  { actor: 'claimer-a', via: 'direct', namespace: 'tenant-b', names: { hostclaims: 'bravo-two', hardwaredata: 'hosts-b.host-b' } },
];

function crossingCase(crossing: Crossing, resource: Resource, operation: Operation, name = crossing.names[resource]): IsolationCase {
  const collection = `${GROUP_PATH}/namespaces/${crossing.namespace}/${resource}`;
  const request = operation.request(collection, name, resource);
  return {
    name: `${crossing.actor} (${crossing.via}) ${operation.label} ${resource} ${crossing.namespace}/${name}`,
    request: `${crossing.actor} via ${crossing.via}: ${request.method ?? 'GET'} ${request.path}`,
    expected: forbidden({
      user: crossing.actor,
      verb: operation.verb,
      resource,
      namespace: crossing.namespace,
      ...(operation.subresource === undefined ? {} : { subresource: operation.subresource }),
      ...(operation.named ? { name } : {}),
    }),
    run: async (world) => statusOf(await world.as(crossing.actor, crossing.via, request)),
  };
}

const matrix: IsolationCase[] = crossings.flatMap((crossing) =>
  (['hostclaims', 'hardwaredata'] as const).flatMap((resource) => operationsOf[resource].map((operation) => crossingCase(crossing, resource, operation))),
);

const byLabel = (label: string): Operation => [...reads, ...writes].find((operation) => operation.label === label) as Operation;
const tenantA = { actor: 'tenant-a', via: 'aggregator', namespace: 'tenant-b', names: { hostclaims: 'no-such-claim', hardwaredata: 'no-such-host' } } as const;
const missing: IsolationCase[] = ['get', 'merge patch', 'delete'].flatMap((label) => [
  crossingCase(tenantA, 'hostclaims', byLabel(label)),
  crossingCase({ ...tenantA, via: 'direct' }, 'hostclaims', byLabel(label)),
]);

const ownNamespace = (actor: Actor, via: Path, path: string, expected: Outcome, read: typeof statusOf = statusOf): IsolationCase => ({
  name: `${actor} (${via}) GET ${path.slice(GROUP_PATH.length)}`,
  request: `${actor} via ${via}: GET ${path}`,
  expected,
  run: async (world) => read(await world.as(actor, via, { path })),
});

const hidden: IsolationCase[] = [
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata/hosts-b.host-b`, notFound('hardwaredata', 'hosts-b.host-b')),
  ownNamespace('tenant-a', 'direct', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata/hosts-b.host-b`, notFound('hardwaredata', 'hosts-b.host-b')),
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata/hosts-a.no-such-host`, notFound('hardwaredata', 'hosts-a.no-such-host')),
  ownNamespace('tenant-b', 'aggregator', `${GROUP_PATH}/namespaces/tenant-b/hardwaredata/hosts-a.host-a`, notFound('hardwaredata', 'hosts-a.host-a')),
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata?fieldSelector=metadata.name%3Dhosts-b.host-b`, { code: 200, names: [] }, namesOf),
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata`, { code: 200, names: ['tenant-a/hosts-a.host-a', 'tenant-a/hosts-a.host-a2', 'tenant-a/hosts-a.host-a3', 'tenant-a/hosts-shared.host-s'] }, namesOf),
  ownNamespace('tenant-b', 'direct', `${GROUP_PATH}/namespaces/tenant-b/hardwaredata`, { code: 200, names: ['tenant-b/hosts-b.host-b', 'tenant-b/hosts-shared.host-s'] }, namesOf),
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/tenant-a/hostclaims/bravo-one`, notFound('hostclaims', 'bravo-one')),
  ownNamespace('tenant-a', 'direct', `${GROUP_PATH}/namespaces/tenant-a/hostclaims/bravo-one`, notFound('hostclaims', 'bravo-one')),
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/tenant-a/hostclaims/alpha-one`, { code: 200, object: 'tenant-a/alpha-one' }, objectOf),
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/no-such-namespace/hostclaims`, forbidden({ user: 'tenant-a', verb: 'list', resource: 'hostclaims', namespace: 'no-such-namespace' })),
  ownNamespace('tenant-a', 'direct', `${GROUP_PATH}/namespaces/hostclaim-system/hostclaims`, forbidden({ user: 'tenant-a', verb: 'list', resource: 'hostclaims', namespace: 'hostclaim-system' })),
];

/** HardwareData names are `<host namespace>.<host name>`: names built around that split find nothing a tenant may not see. */
const forgedHardwareNames = ['hosts-a..host-a', 'hosts-a.host-a.', '.hosts-a.host-a', 'host-a', 'hosts-a', 'hosts-b.host-b.x', 'hosts-a.host-b', 'hosts-b.host-a'].map((name) =>
  ownNamespace('tenant-a', 'aggregator', `${GROUP_PATH}/namespaces/tenant-a/hardwaredata/${name}`, notFound('hardwaredata', name)),
);

const unchanged: IsolationCase = {
  name: "tenant-b's claims are unchanged after every cross-namespace write",
  request: 'admin: GET /apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-b/hostclaims (names, labels, generations)',
  expected: { code: 200, claims: claimsOf['tenant-b'].map((name) => `${name} labels={"app":"bravo"} generation=1`) },
  run: async (world) => {
    const response = await world.as('admin', 'aggregator', { path: `${GROUP_PATH}/namespaces/tenant-b/hostclaims` });
    const list = response.json as { items: { metadata: { name: string; labels?: Record<string, string>; generation?: number } }[] };
    return { code: response.status, claims: list.items.map((c) => `${c.metadata.name} labels=${JSON.stringify(c.metadata.labels ?? {})} generation=${String(c.metadata.generation)}`).sort() };
  },
};

export const crossNamespace: CaseGroup = { name: 'every verb across namespaces', cases: [...matrix, ...missing, ...hidden, ...forgedHardwareNames, unchanged] };
