/**
 * What tenants can read that is not an object: discovery, OpenAPI, Events,
 * tables, the metrics endpoint; and what operators read: /metrics and the
 * server's log. Each text is scanned for the names a tenant must never see
 * (inventory.ts `forbiddenTermsFor`: the storage namespace, the backing
 * kind and group, record names, BMC addresses, credentials Secret names and
 * passwords, Ironic text, the other tenant's namespace, claims, Secret
 * names and contents). Every answer of every other case is scanned the same
 * way by the runner; the cases here name the documents explicitly.
 * Operator texts may name infrastructure, never Secret contents or
 * credentials a client sent.
 */
import { readFile } from 'node:fs/promises';
import { forbidden, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { forbiddenTermsFor, hosts, ownWords, secretPayload } from '../inventory.js';
import { GROUP_PATH, type Path, type World } from '../world.js';

/** The forbidden terms found in `text` for `viewer`. */
export function leaksIn(text: string, viewer: 'tenant-a' | 'tenant-b', sent = ''): string[] {
  const withoutOwnWords = ownWords[viewer].reduce((rest, words) => rest.replaceAll(words, ''), text);
  return forbiddenTermsFor(viewer).filter((term) => withoutOwnWords.includes(term) && !sent.includes(term));
}

function documentCase(name: string, viewer: 'tenant-a' | 'tenant-b', via: Path, path: string, accept?: string): IsolationCase {
  return {
    name: `${viewer} (${via}) reads ${name}`,
    request: `${viewer} via ${via}: GET ${path}${accept === undefined ? '' : ` [Accept: ${accept}]`}`,
    expected: { code: 200, leaks: [] },
    run: async (world) => {
      const response = await world.as(viewer, via, { path, ...(accept === undefined ? {} : { headers: { Accept: accept } }) });
      return { code: response.status, leaks: leaksIn(response.body, viewer) };
    },
  };
}

const table = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const documents: IsolationCase[] = (['tenant-a', 'tenant-b'] as const).flatMap((viewer) => [
  documentCase('the group version discovery', viewer, 'aggregator', GROUP_PATH),
  documentCase('the group discovery', viewer, 'aggregator', '/apis/tenancy.metal3.io'),
  documentCase('the server’s discovery directly', viewer, 'direct', '/apis'),
  documentCase('OpenAPI v3 of the group', viewer, 'direct', '/openapi/v3/apis/tenancy.metal3.io/v1alpha1'),
  documentCase('OpenAPI v2', viewer, 'direct', '/openapi/v2'),
  documentCase('its claims as a Table', viewer, 'aggregator', `${GROUP_PATH}/namespaces/${viewer}/hostclaims`, table),
  documentCase('its HardwareData as a Table', viewer, 'aggregator', `${GROUP_PATH}/namespaces/${viewer}/hardwaredata`, table),
  documentCase('its HardwareData as YAML', viewer, 'aggregator', `${GROUP_PATH}/namespaces/${viewer}/hardwaredata`, 'application/yaml'),
  documentCase('its claims with managedFields', viewer, 'direct', `${GROUP_PATH}/namespaces/${viewer}/hostclaims`),
  documentCase('the Events of its namespace', viewer, 'aggregator', `/api/v1/namespaces/${viewer}/events`),
]);

const metricsDenied: IsolationCase[] = (['aggregator', 'direct'] as const).map((via) => ({
  name: `tenant-a (${via}) reads the server's /metrics`,
  request: `tenant-a via ${via}: GET /metrics`,
  // Through the aggregator /metrics is kube-apiserver's own; either way a tenant may not read it.
  expected: { code: 403, reason: 'Forbidden', message: 'forbidden: User "tenant-a" cannot get path "/metrics"' },
  run: async (world) => statusOf(await world.as('tenant-a', via, { path: '/metrics' })),
}));

const secrets = (): string[] => [...Object.values(secretPayload), ...hosts.map((host) => host.password)];
const operatorSecrets = (world: World): string[] => [...secrets(), world.robotToken, 'not-a-token', 'YWRtaW46YWRtaW4=', 'PRIVATE KEY'];

const operator: IsolationCase[] = [
  {
    name: "admin reads the server's /metrics: no Secret contents, no namespaces or names",
    request: 'admin direct: GET /metrics',
    expected: { code: 200, found: [] },
    run: async (world) => {
      const response = await world.as('admin', 'direct', { path: '/metrics' });
      const found = [...operatorSecrets(world), 'alpha-one', 'bravo-one', 'tenant-b.', 'tenant-a.'].filter((term) => response.body.includes(term));
      return { code: response.status, found };
    },
  },
  {
    name: "the server's log: no Secret contents, tokens, keys or Authorization headers",
    request: 'read logs/hostclaim-apiserver.log after the cases',
    expected: { found: [] },
    run: async (world) => {
      const log = await readFile(world.env.serverLogPath, 'utf8');
      return { found: operatorSecrets(world).filter((term) => log.includes(term)) };
    },
  },
  {
    name: 'Events about the bound claim name no infrastructure',
    request: 'tenant-a via aggregator: GET /api/v1/namespaces/tenant-a/events?fieldSelector=involvedObject.name%3Dalpha-deputy',
    expected: { code: 200, some: true, leaks: [] },
    run: async (world) => {
      const response = await world.as('tenant-a', 'aggregator', { path: '/api/v1/namespaces/tenant-a/events?fieldSelector=involvedObject.name%3Dalpha-deputy' });
      const items = (response.json as { items?: unknown[] } | undefined)?.items ?? [];
      return { code: response.status, some: items.length > 0, leaks: leaksIn(response.body, 'tenant-a') };
    },
  },
  {
    name: 'an error about a Secret names only what the tenant sent',
    request: 'tenant-a via aggregator: GET alpha-deputy; its Synchronized message',
    expected: { message: 'Secret "host-a-bmc-credentials" not found in namespace "tenant-a".', leaksBeyondTheSecretName: [] },
    run: async (world) => {
      const response = await world.as('tenant-a', 'aggregator', { path: `${GROUP_PATH}/namespaces/tenant-a/hostclaims/alpha-deputy` });
      const claim = response.json as { status?: { conditions?: { type: string; message: string }[] } };
      const message = claim.status?.conditions?.find((c) => c.type === 'Synchronized')?.message ?? '';
      return { message, leaksBeyondTheSecretName: leaksIn(response.body, 'tenant-a', 'host-a-bmc-credentials') };
    },
  },
];

const notAllowed: Outcome = forbidden({ user: 'tenant-a', verb: 'get', resource: 'hostclaims', namespace: 'tenant-b', name: 'bravo-one' });
const errorTexts: IsolationCase[] = [
  {
    name: 'a denial names only what the tenant sent',
    request: 'tenant-a via aggregator: GET tenant-b/hostclaims/bravo-one',
    expected: notAllowed,
    run: async (world) => statusOf(await world.as('tenant-a', 'aggregator', { path: `${GROUP_PATH}/namespaces/tenant-b/hostclaims/bravo-one` })),
  },
];

export const leaks: CaseGroup = { name: 'infrastructure names in what tenants and operators read', cases: [...documents, ...metricsDenied, ...operator, ...errorTexts] };
