/**
 * Status writes, dry-run and server-side apply, and bodies that name
 * another namespace or object than the URL.
 *
 * - Tenant roles do not include hostclaims/status: every status verb is
 *   kube's 403, through the aggregator and directly.
 * - Status sent on the main resource is ignored (kube's status subresource
 *   contract): a tenant cannot forge a binding by writing one.
 * - Dry-run goes through every check a real write does (authorization,
 *   validation, the Secret access check) and changes nothing.
 * - A body naming another namespace or name than the URL is kube's 400
 *   (k8s.io/apiserver registry/rest/meta.go, endpoints/handlers/rest.go).
 */
import { badRequest, claimBody, contentTypes, forbidden, invalid, namesOf, objectOf, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { GROUP_PATH, type Path, type Request, type World } from '../world.js';

const collection = `${GROUP_PATH}/namespaces/tenant-a/hostclaims`;
const alphaOne = `${collection}/alpha-one`;
const forgedStatus = { bareMetalHost: { namespace: 'hosts-b', name: 'host-b' }, poweredOn: true, conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'forged', lastTransitionTime: '2026-01-01T00:00:00Z' }] };

function sendCase(name: string, via: Path, request: Request, expected: Outcome, read = statusOf): IsolationCase {
  return {
    name: `${name} (${via})`,
    request: `tenant-a via ${via}: ${request.method ?? 'GET'} ${request.path}${request.body === undefined ? '' : ` ${request.body}`}`,
    expected,
    run: async (world) => read(await world.as('tenant-a', via, request)),
  };
}

const statusDenied = (verb: string): Outcome => forbidden({ user: 'tenant-a', verb, resource: 'hostclaims', subresource: 'status', namespace: 'tenant-a', name: 'alpha-one' });
const typed = (contentType: string): Record<string, string> => ({ 'Content-Type': contentType });

const statusWrites: IsolationCase[] = (['aggregator', 'direct'] as const).flatMap((via) => [
  sendCase('get own status', via, { path: `${alphaOne}/status` }, statusDenied('get')),
  sendCase('update own status', via, { method: 'PUT', path: `${alphaOne}/status`, headers: typed(contentTypes.json), body: claimBody('alpha-one') }, statusDenied('update')),
  sendCase('merge patch own status', via, { method: 'PATCH', path: `${alphaOne}/status`, headers: typed(contentTypes.merge), body: JSON.stringify({ status: forgedStatus }) }, statusDenied('patch')),
  sendCase('JSON patch own status', via, { method: 'PATCH', path: `${alphaOne}/status`, headers: typed(contentTypes.jsonPatch), body: '[{"op":"add","path":"/status/poweredOn","value":true}]' }, statusDenied('patch')),
  sendCase('apply own status', via, { method: 'PATCH', path: `${alphaOne}/status?fieldManager=x&force=true`, headers: typed(contentTypes.apply), body: JSON.stringify({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'alpha-one' }, status: forgedStatus }) }, statusDenied('patch')),
]);

/** Writes `request` on the main resource and reports whether alpha-one's status came out as it was. */
function statusIgnoredCase(name: string, build: (current: Record<string, unknown>) => Request, expectedCode: number): IsolationCase {
  return {
    name: `status sent with ${name} is ignored`,
    request: `tenant-a via aggregator: ${name} of alpha-one carrying status ${JSON.stringify(forgedStatus)}`,
    expected: { code: expectedCode, statusUnchanged: true },
    run: async (world) => {
      const before = (await world.as('tenant-a', 'aggregator', { path: alphaOne })).json as Record<string, unknown>;
      const response = await world.as('tenant-a', 'aggregator', build(before));
      const after = (await world.as('tenant-a', 'aggregator', { path: alphaOne })).json as Record<string, unknown>;
      return { code: response.status, statusUnchanged: JSON.stringify(after['status']) === JSON.stringify(before['status']) };
    },
  };
}

const mainResource: IsolationCase[] = [
  statusIgnoredCase('an update', (current) => ({ method: 'PUT', path: alphaOne, headers: typed(contentTypes.json), body: JSON.stringify({ ...current, status: forgedStatus }) }), 200),
  statusIgnoredCase('a merge patch', () => ({ method: 'PATCH', path: alphaOne, headers: typed(contentTypes.merge), body: JSON.stringify({ status: forgedStatus }) }), 200),
  statusIgnoredCase('a JSON patch', () => ({ method: 'PATCH', path: alphaOne, headers: typed(contentTypes.jsonPatch), body: JSON.stringify([{ op: 'add', path: '/status/bareMetalHost', value: forgedStatus.bareMetalHost }]) }), 200),
  // Custom resources take no strategic merge patch (kube's 415), and nothing changes.
  statusIgnoredCase('a strategic merge patch', () => ({ method: 'PATCH', path: alphaOne, headers: typed(contentTypes.strategic), body: JSON.stringify({ status: forgedStatus }) }), 415),
  statusIgnoredCase('server-side apply', () => ({ method: 'PATCH', path: `${alphaOne}?fieldManager=isolation`, headers: typed(contentTypes.apply), body: JSON.stringify({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'alpha-one' }, status: forgedStatus }) }), 200),
  {
    name: 'status sent with a create is dropped',
    request: `tenant-a via aggregator: POST ${collection} forged-status with status ${JSON.stringify(forgedStatus)}`,
    expected: { code: 201, bareMetalHost: 'none', poweredOn: 'none' },
    run: async (world) => {
      const body = JSON.stringify({ ...(JSON.parse(claimBody('forged-status')) as Record<string, unknown>), status: forgedStatus });
      const response = await world.as('tenant-a', 'aggregator', { method: 'POST', path: collection, headers: typed(contentTypes.json), body });
      const status = (response.json as { status?: { bareMetalHost?: unknown; poweredOn?: unknown } }).status;
      return { code: response.status, bareMetalHost: status?.bareMetalHost === undefined ? 'none' : JSON.stringify(status.bareMetalHost), poweredOn: status?.poweredOn === undefined ? 'none' : JSON.stringify(status.poweredOn) };
    },
  },
];

const tenantB = `${GROUP_PATH}/namespaces/tenant-b/hostclaims`;
const reservedLabel = 'metadata.labels[infra.tenancy.metal3.io/namespace]: Forbidden: this prefix is reserved for the infrastructure';

async function stillThere(world: World, request: Request): Promise<Outcome> {
  const response = await world.as('tenant-a', 'aggregator', request);
  const after = namesOf(await world.as('tenant-a', 'aggregator', { path: `${collection}?labelSelector=app` }));
  return { code: response.status, after: after['names'] };
}
const allAlpha = ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two'];

const dryRun: IsolationCase[] = [
  sendCase("dry-run merge patch of tenant-b's claim", 'aggregator', { method: 'PATCH', path: `${tenantB}/bravo-one?dryRun=All`, headers: typed(contentTypes.merge), body: '{"metadata":{"labels":{"x":"y"}}}' }, forbidden({ user: 'tenant-a', verb: 'patch', resource: 'hostclaims', namespace: 'tenant-b', name: 'bravo-one' })),
  sendCase("dry-run create in tenant-b's namespace", 'direct', { method: 'POST', path: `${tenantB}?dryRun=All`, headers: typed(contentTypes.json), body: claimBody('dry') }, forbidden({ user: 'tenant-a', verb: 'create', resource: 'hostclaims', namespace: 'tenant-b' })),
  sendCase("dry-run delete of tenant-b's claim", 'aggregator', { method: 'DELETE', path: `${tenantB}/bravo-one?dryRun=All` }, forbidden({ user: 'tenant-a', verb: 'delete', resource: 'hostclaims', namespace: 'tenant-b', name: 'bravo-one' })),
  sendCase("dry-run apply to tenant-b's claim", 'aggregator', { method: 'PATCH', path: `${tenantB}/bravo-one?dryRun=All&fieldManager=x&force=true`, headers: typed(contentTypes.apply), body: claimBody('bravo-one') }, forbidden({ user: 'tenant-a', verb: 'patch', resource: 'hostclaims', namespace: 'tenant-b', name: 'bravo-one' })),
  sendCase('dry-run create with a reserved label', 'aggregator', { method: 'POST', path: `${collection}?dryRun=All`, headers: typed(contentTypes.json), body: claimBody('dry-reserved', {}, { labels: { 'infra.tenancy.metal3.io/namespace': 'tenant-b' } }) }, invalid('dry-reserved', reservedLabel)),
  sendCase('dry-run apply with a reserved label', 'aggregator', { method: 'PATCH', path: `${collection}/dry-apply?dryRun=All&fieldManager=x`, headers: typed(contentTypes.apply), body: claimBody('dry-apply', {}, { labels: { 'infra.tenancy.metal3.io/namespace': 'tenant-b' } }) }, invalid('dry-apply', reservedLabel)),
  {
    name: 'dry-run delete of an own claim changes nothing',
    request: `tenant-a via aggregator: DELETE ${alphaOne}?dryRun=All; then list`,
    expected: { code: 200, after: allAlpha },
    run: (world) => stillThere(world, { method: 'DELETE', path: `${alphaOne}?dryRun=All` }),
  },
  {
    name: 'dry-run deletecollection of own claims changes nothing',
    request: `tenant-a via aggregator: DELETE ${collection}?dryRun=All&labelSelector=app; then list`,
    expected: { code: 200, after: allAlpha },
    run: (world) => stillThere(world, { method: 'DELETE', path: `${collection}?dryRun=All&labelSelector=app` }),
  },
  sendCase('dry-run create named like a record', 'aggregator', { method: 'POST', path: `${collection}?dryRun=All`, headers: typed(contentTypes.json), body: claimBody('tenant-b.bravo-two') }, { code: 201, object: 'tenant-a/tenant-b.bravo-two' }, objectOf),
];

const otherNamespace = badRequest('the namespace of the provided object does not match the namespace sent on the request');
const withNamespace = (name: string, namespace: string): string => claimBody(name, {}, { namespace });
const bodies: IsolationCase[] = [
  sendCase('create with metadata.namespace of tenant-b', 'aggregator', { method: 'POST', path: collection, headers: typed(contentTypes.json), body: withNamespace('moved', 'tenant-b') }, otherNamespace),
  sendCase('create with metadata.namespace of the storage namespace', 'direct', { method: 'POST', path: collection, headers: typed(contentTypes.json), body: withNamespace('moved', 'hostclaim-system') }, otherNamespace),
  sendCase('apply with metadata.namespace of tenant-b', 'aggregator', { method: 'PATCH', path: `${collection}/alpha-two?fieldManager=x`, headers: typed(contentTypes.apply), body: withNamespace('alpha-two', 'tenant-b') }, otherNamespace),
  sendCase('merge patch moving the claim to tenant-b', 'aggregator', { method: 'PATCH', path: `${collection}/alpha-two`, headers: typed(contentTypes.merge), body: '{"metadata":{"namespace":"tenant-b"}}' }, otherNamespace),
  sendCase('JSON patch moving the claim to tenant-b', 'direct', { method: 'PATCH', path: `${collection}/alpha-two`, headers: typed(contentTypes.jsonPatch), body: '[{"op":"replace","path":"/metadata/namespace","value":"tenant-b"}]' }, otherNamespace),
  sendCase('merge patch renaming the claim to bravo-one', 'aggregator', { method: 'PATCH', path: `${collection}/alpha-two`, headers: typed(contentTypes.merge), body: '{"metadata":{"name":"bravo-one"}}' }, badRequest('the name of the object (bravo-one) does not match the name on the URL (alpha-two)')),
  sendCase('apply naming bravo-one on the URL of alpha-two', 'aggregator', { method: 'PATCH', path: `${collection}/alpha-two?fieldManager=x`, headers: typed(contentTypes.apply), body: claimBody('bravo-one') }, badRequest('the name of the object (bravo-one) does not match the name on the URL (alpha-two)')),
  sendCase('create with a reserved annotation', 'aggregator', { method: 'POST', path: collection, headers: typed(contentTypes.json), body: claimBody('reserved-annotation', {}, { annotations: { 'infra.tenancy.metal3.io/name': 'bravo-one' } }) }, invalid('reserved-annotation', 'metadata.annotations[infra.tenancy.metal3.io/name]: Forbidden: this prefix is reserved for the infrastructure')),
  sendCase('merge patch adding a reserved finalizer', 'aggregator', { method: 'PATCH', path: `${collection}/alpha-two`, headers: typed(contentTypes.merge), body: '{"metadata":{"finalizers":["infra.tenancy.metal3.io/tenant-finalizers"]}}' }, invalid('alpha-two', 'metadata.finalizers[0]: Forbidden: this prefix is reserved for the infrastructure')),
  sendCase('JSON patch adding the bookkeeping namespace label', 'direct', { method: 'PATCH', path: `${collection}/alpha-two`, headers: typed(contentTypes.jsonPatch), body: '[{"op":"add","path":"/metadata/labels/infra.tenancy.metal3.io~1namespace","value":"tenant-b"}]' }, invalid('alpha-two', reservedLabel)),
  sendCase('apply with the binding annotation', 'aggregator', { method: 'PATCH', path: `${collection}/alpha-two?fieldManager=x`, headers: typed(contentTypes.apply), body: claimBody('alpha-two', {}, { annotations: { 'binding.infra.tenancy.metal3.io/host': 'hosts-b/host-b' } }) }, invalid('alpha-two', 'metadata.annotations[binding.infra.tenancy.metal3.io/host]: Forbidden: this prefix is reserved for the infrastructure')),
];

/** kube-apiserver's warnings and apply errors about a record would name the backing object; the server words them about the claim. */
function warningCase(name: string, request: Request, expected: Outcome): IsolationCase {
  return {
    name,
    request: `tenant-a via aggregator: ${request.method ?? 'GET'} ${request.path} ${request.body ?? ''}`,
    expected,
    run: async (world) => {
      const response = await world.as('tenant-a', 'aggregator', request);
      const warning = response.headers['warning'];
      const refused = response.status >= 400 ? { message: statusOf(response)['message'] } : {};
      return { code: response.status, ...refused, warnings: warning === undefined ? [] : Array.isArray(warning) ? warning : [warning] };
    },
  };
}

const unknownField = (field: string): string => `299 - "unknown field \\"${field}\\""`;
const warnings: IsolationCase[] = [
  warningCase('an unknown field on create is warned about as the claim’s', { method: 'POST', path: `${collection}?fieldValidation=Warn`, headers: typed(contentTypes.json), body: claimBody('warned', { extra: 1 }) }, { code: 201, warnings: [unknownField('spec.extra')] }),
  warningCase('an unknown field on update is warned about as the claim’s', { method: 'PATCH', path: `${collection}/warned?fieldValidation=Warn`, headers: typed(contentTypes.merge), body: '{"spec":{"other":1}}' }, { code: 200, warnings: [unknownField('spec.other')] }),
  // Apply is strict about the schema whatever fieldValidation says (kube's structuredmerge.go), naming the applied object as sent: never the record.
  warningCase('an unknown field in an apply is refused in the claim’s words', { method: 'PATCH', path: `${collection}/warned?fieldValidation=Warn&fieldManager=x&dryRun=All`, headers: typed(contentTypes.apply), body: claimBody('warned', { third: 1 }) }, { code: 400, message: 'failed to create typed patch object (/warned; tenancy.metal3.io/v1alpha1, Kind=HostClaim): .spec.third: field not declared in schema', warnings: [] }),
  warningCase('an unknown field in an apply naming its namespace is refused in the claim’s words', { method: 'PATCH', path: `${collection}/warned?fieldManager=x`, headers: typed(contentTypes.apply), body: claimBody('warned', { third: 1 }, { namespace: 'tenant-a' }) }, { code: 400, message: 'failed to create typed patch object (tenant-a/warned; tenancy.metal3.io/v1alpha1, Kind=HostClaim): .spec.third: field not declared in schema', warnings: [] }),
];

export const writes: CaseGroup = { name: 'status writes, dry-run and server-side apply', cases: [...statusWrites, ...mainResource, ...dryRun, ...bodies, ...warnings] };
