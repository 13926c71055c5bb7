/**
 * Label and field selectors probing the storage mapping's reserved keys
 * (src/backing/storage-mapping.ts): a label key in the project's domain
 * (`tenancy.metal3.io`, `*.tenancy.metal3.io`, e.g. the bookkeeping label
 * `infra.tenancy.metal3.io/namespace`) is refused with 400, on every read
 * path and on deletecollection, so that a tenant can neither see nor use
 * them; field selectors can only narrow a request's namespace, never widen
 * it, and match virtual names, never record names.
 */
import { badRequest, namesOf, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { GROUP_PATH, type Actor, type Path } from '../world.js';

const reservedKeys = [
  'infra.tenancy.metal3.io/namespace',
  'infra.tenancy.metal3.io/name',
  'binding.infra.tenancy.metal3.io/host',
  'tenancy.metal3.io/shared-labels',
  'x.tenancy.metal3.io/y',
] as const;

const reservedRefusal = (key: string): Outcome => badRequest(`unable to parse requirement: label key "${key}" uses a reserved prefix`);

interface Probe {
  readonly label: string;
  readonly method: 'GET' | 'DELETE';
  readonly suffix: string;
}

const probes: readonly Probe[] = [
  { label: 'list', method: 'GET', suffix: '' },
  { label: 'watch', method: 'GET', suffix: '&watch=true&timeoutSeconds=1' },
  { label: 'deletecollection', method: 'DELETE', suffix: '' },
];

function selectorCase(actor: Actor, via: Path, resource: 'hostclaims' | 'hardwaredata', selector: string, probe: Probe, expected: Outcome): IsolationCase {
  const namespace = actor === 'tenant-b' ? 'tenant-b' : 'tenant-a';
  const path = `${GROUP_PATH}/namespaces/${namespace}/${resource}?labelSelector=${encodeURIComponent(selector)}${probe.suffix}`;
  return {
    name: `${actor} (${via}) ${probe.label} ${resource} labelSelector=${selector}`,
    request: `${actor} via ${via}: ${probe.method} ${path}`,
    expected,
    run: async (world) => namesOf(await world.as(actor, via, { method: probe.method, path })),
  };
}

const bySelector: IsolationCase[] = [
  ...reservedKeys.flatMap((key) => [
    selectorCase('tenant-a', 'aggregator', 'hostclaims', `${key}=tenant-b`, probes[0] as Probe, reservedRefusal(key)),
    selectorCase('tenant-a', 'direct', 'hostclaims', key, probes[1] as Probe, reservedRefusal(key)),
    selectorCase('tenant-a', 'aggregator', 'hostclaims', `!${key}`, probes[2] as Probe, reservedRefusal(key)),
    selectorCase('tenant-b', 'aggregator', 'hardwaredata', `${key} in (tenant-a,tenant-b)`, probes[0] as Probe, reservedRefusal(key)),
  ]),
  selectorCase('tenant-a', 'aggregator', 'hostclaims', 'app=alpha,infra.tenancy.metal3.io/namespace!=tenant-a', probes[0] as Probe, reservedRefusal('infra.tenancy.metal3.io/namespace')),
  selectorCase('tenant-a', 'aggregator', 'hostclaims', 'app=alpha', probes[0] as Probe, { code: 200, names: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two'] }),
  selectorCase('tenant-a', 'aggregator', 'hostclaims', 'app=bravo', probes[0] as Probe, { code: 200, names: [] }),
  selectorCase('tenant-a', 'aggregator', 'hostclaims', 'app in (alpha,bravo)', probes[0] as Probe, { code: 200, names: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two'] }),
  selectorCase('admin', 'aggregator', 'hostclaims', 'infra.tenancy.metal3.io/namespace=tenant-b', probes[0] as Probe, reservedRefusal('infra.tenancy.metal3.io/namespace')),
];

function fieldCase(actor: Actor, resource: 'hostclaims' | 'hardwaredata', selector: string, expected: Outcome, extra = ''): IsolationCase {
  const path = `${GROUP_PATH}/namespaces/${actor === 'tenant-b' ? 'tenant-b' : 'tenant-a'}/${resource}?fieldSelector=${encodeURIComponent(selector)}${extra}`;
  return {
    name: `${actor} list ${resource} fieldSelector=${selector}${extra}`,
    request: `${actor} via aggregator: GET ${path}`,
    expected,
    run: async (world) => namesOf(await world.as(actor, 'aggregator', { path })),
  };
}

const empty: Outcome = { code: 200, names: [] };
const byField: IsolationCase[] = [
  fieldCase('tenant-a', 'hostclaims', 'metadata.namespace=tenant-b', empty),
  fieldCase('tenant-a', 'hostclaims', 'metadata.namespace=hostclaim-system', empty),
  fieldCase('tenant-a', 'hostclaims', 'metadata.namespace!=tenant-a', empty),
  fieldCase('tenant-a', 'hostclaims', 'metadata.name=bravo-one', empty),
  fieldCase('tenant-a', 'hostclaims', 'metadata.name=tenant-a.alpha-one', empty),
  fieldCase('tenant-a', 'hostclaims', 'metadata.name=tenant-b.bravo-one', empty),
  fieldCase('tenant-a', 'hostclaims', 'metadata.name=alpha-one', { code: 200, names: ['tenant-a/alpha-one'] }),
  fieldCase('tenant-a', 'hostclaims', 'metadata.name=alpha-one', { code: 200, names: ['tenant-a/alpha-one'] }, '&resourceVersion=0'),
  fieldCase('tenant-a', 'hostclaims', 'metadata.namespace=tenant-b', empty, '&resourceVersion=0'),
  fieldCase('tenant-a', 'hardwaredata', 'metadata.name=hosts-b.host-b', empty),
  fieldCase('tenant-a', 'hardwaredata', 'metadata.namespace=tenant-b', empty),
  fieldCase('tenant-b', 'hardwaredata', 'metadata.name!=hosts-b.host-b', { code: 200, names: ['tenant-b/hosts-shared.host-s'] }),
];

/** deletecollection narrowed by a field selector that names the other namespace or its objects: nothing anywhere is deleted. */
function narrowedDelete(selector: string): IsolationCase {
  const path = `${GROUP_PATH}/namespaces/tenant-a/hostclaims?fieldSelector=${encodeURIComponent(selector)}`;
  return {
    name: `tenant-a deletecollection hostclaims fieldSelector=${selector}`,
    request: `tenant-a via aggregator: DELETE ${path}; then admin lists both namespaces`,
    expected: { code: 200, deleted: [], after: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two', 'tenant-b/bravo-one', 'tenant-b/bravo-two'] },
    run: async (world) => {
      const response = await world.as('tenant-a', 'aggregator', { method: 'DELETE', path });
      const deleted = namesOf(response)['names'] ?? statusOf(response);
      const after = namesOf(await world.as('admin', 'aggregator', { path: `${GROUP_PATH}/hostclaims?labelSelector=app` }))['names'];
      return { code: response.status, deleted, after };
    },
  };
}

const narrowedDeletes: IsolationCase[] = ['metadata.namespace=tenant-b', 'metadata.name=bravo-one', 'metadata.name=tenant-b.bravo-one', 'metadata.namespace=hostclaim-system'].map(narrowedDelete);

export const selectors: CaseGroup = { name: 'selectors probing reserved keys and other namespaces', cases: [...bySelector, ...byField, ...narrowedDeletes] };
