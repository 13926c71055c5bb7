/**
 * Names built to collide in the storage mapping. A claim is stored as the
 * record `<namespace>.<name>` in the storage namespace, or `h-<sha256>` when
 * that is longer than 253 characters (src/backing/storage-mapping.ts).
 * Namespaces have no dots, so two readable names never collide; a digest
 * has no dot, so it never equals a readable name; and a record is only
 * shown as the claim its bookkeeping names. These cases build every near
 * collision a tenant can: claims named like another tenant's record, the
 * same name in both namespaces, a claim named like the digest of a long
 * one, long names in both, and records an admin plants with bookkeeping
 * that contradicts their name.
 */
import { backingName } from '../../../src/backing/storage-mapping.js';
import { claimBody, contentTypes, namesOf, notFound, objectOf, statusOf, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { GROUP_PATH, type Actor, type World } from '../world.js';

const claims = (namespace: string): string => `${GROUP_PATH}/namespaces/${namespace}/hostclaims`;
const longName = `long-${'x'.repeat(243)}`;
const digestOfLong = backingName('tenant-a', longName);

async function create(world: World, actor: Actor, namespace: string, name: string): Promise<Outcome> {
  return objectOf(await world.as(actor, 'aggregator', { method: 'POST', path: claims(namespace), headers: { 'Content-Type': contentTypes.json }, body: claimBody(name) }));
}

async function uidOf(world: World, namespace: string, name: string): Promise<string> {
  const response = await world.as('admin', 'aggregator', { path: `${claims(namespace)}/${name}` });
  return (response.json as { metadata?: { uid?: string } }).metadata?.uid ?? `absent (${String(response.status)})`;
}

function step(name: string, request: string, expected: Outcome, run: (world: World) => Promise<Outcome>): IsolationCase {
  return { name, request, expected, run };
}

const record = (name: string, namespaceLabel: string, nameAnnotation: string): Record<string, unknown> => ({
  apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
  kind: 'HostClaimRecord',
  metadata: { name, labels: { 'infra.tenancy.metal3.io/namespace': namespaceLabel }, annotations: { 'infra.tenancy.metal3.io/name': nameAnnotation } },
  spec: { poweredOn: false, hostSelector: { matchLabels: { role: 'none' } } },
});
const recordsPath = '/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords';

const cases: IsolationCase[] = [
  step("tenant-a creates a claim named like tenant-b's record", `tenant-a: POST ${claims('tenant-a')} name=tenant-b.bravo-one`, { code: 201, object: 'tenant-a/tenant-b.bravo-one' }, (w) => create(w, 'tenant-a', 'tenant-a', 'tenant-b.bravo-one')),
  step("tenant-b's bravo-one is still its own after that", 'tenant-b: GET bravo-one; admin: the two uids differ', { code: 200, object: 'tenant-b/bravo-one', distinct: true }, async (w) => {
    const own = objectOf(await w.as('tenant-b', 'aggregator', { path: `${claims('tenant-b')}/bravo-one` }));
    return { ...own, distinct: (await uidOf(w, 'tenant-b', 'bravo-one')) !== (await uidOf(w, 'tenant-a', 'tenant-b.bravo-one')) };
  }),
  step('tenant-b lists its claims: only its own', `tenant-b: GET ${claims('tenant-b')}`, { code: 200, names: ['tenant-b/bravo-one', 'tenant-b/bravo-two'] }, async (w) => namesOf(await w.as('tenant-b', 'aggregator', { path: claims('tenant-b') }))),
  step("tenant-a deletes its look-alike; tenant-b's claim stays", `tenant-a: DELETE ${claims('tenant-a')}/tenant-b.bravo-one; tenant-b: GET bravo-one`, { code: 200, object: 'tenant-b/bravo-one' }, async (w) => {
    const deleted = await w.as('tenant-a', 'aggregator', { method: 'DELETE', path: `${claims('tenant-a')}/tenant-b.bravo-one` });
    if (deleted.status !== 200) return statusOf(deleted);
    return objectOf(await w.as('tenant-b', 'aggregator', { path: `${claims('tenant-b')}/bravo-one` }));
  }),
  step("tenant-b gets tenant-a's record name in its own namespace", `tenant-b: GET ${claims('tenant-b')}/tenant-a.alpha-one`, notFound('hostclaims', 'tenant-a.alpha-one'), async (w) => statusOf(await w.as('tenant-b', 'aggregator', { path: `${claims('tenant-b')}/tenant-a.alpha-one` }))),
  step("tenant-a gets its own record name", `tenant-a: GET ${claims('tenant-a')}/tenant-a.alpha-one`, notFound('hostclaims', 'tenant-a.alpha-one'), async (w) => statusOf(await w.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}/tenant-a.alpha-one` }))),
  step('the same name in both namespaces: created in tenant-a', `tenant-a: POST ${claims('tenant-a')} name=twin`, { code: 201, object: 'tenant-a/twin' }, (w) => create(w, 'tenant-a', 'tenant-a', 'twin')),
  step('the same name in both namespaces: created in tenant-b', `tenant-b: POST ${claims('tenant-b')} name=twin`, { code: 201, object: 'tenant-b/twin' }, (w) => create(w, 'tenant-b', 'tenant-b', 'twin')),
  step("a patch of tenant-a's twin leaves tenant-b's twin alone", "tenant-a: PATCH twin labels side=a; tenant-b: GET twin", { code: 200, labels: {} }, async (w) => {
    const patched = await w.as('tenant-a', 'aggregator', { method: 'PATCH', path: `${claims('tenant-a')}/twin`, headers: { 'Content-Type': contentTypes.merge }, body: '{"metadata":{"labels":{"side":"a"}}}' });
    if (patched.status !== 200) return statusOf(patched);
    const other = await w.as('tenant-b', 'aggregator', { path: `${claims('tenant-b')}/twin` });
    return { code: other.status, labels: (other.json as { metadata?: { labels?: Record<string, string> } }).metadata?.labels ?? {} };
  }),
  step("deleting tenant-b's twin leaves tenant-a's", "tenant-b: DELETE twin; tenant-a: GET twin", { code: 200, object: 'tenant-a/twin' }, async (w) => {
    const deleted = await w.as('tenant-b', 'aggregator', { method: 'DELETE', path: `${claims('tenant-b')}/twin` });
    if (deleted.status !== 200) return statusOf(deleted);
    return objectOf(await w.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}/twin` }));
  }),
  step('a 248-character name (stored under a digest) in tenant-a', `tenant-a: POST ${claims('tenant-a')} name=long-x…(248)`, { code: 201, object: `tenant-a/${longName}` }, (w) => create(w, 'tenant-a', 'tenant-a', longName)),
  step('the same long name in tenant-b', `tenant-b: POST ${claims('tenant-b')} name=long-x…(248)`, { code: 201, object: `tenant-b/${longName}` }, (w) => create(w, 'tenant-b', 'tenant-b', longName)),
  step("the long claim's digest as a name in tenant-a does not resolve to it", `tenant-a: GET ${claims('tenant-a')}/${digestOfLong}`, notFound('hostclaims', digestOfLong), async (w) => statusOf(await w.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}/${digestOfLong}` }))),
  step("a claim named like the digest of tenant-a's long claim", `tenant-a: POST ${claims('tenant-a')} name=${digestOfLong}`, { code: 201, object: `tenant-a/${digestOfLong}` }, (w) => create(w, 'tenant-a', 'tenant-a', digestOfLong)),
  step('the long claims and the digest-named one are three objects', 'admin: uids of tenant-a/long, tenant-b/long, tenant-a/<digest>', { distinct: 3 }, async (w) => ({
    distinct: new Set([await uidOf(w, 'tenant-a', longName), await uidOf(w, 'tenant-b', longName), await uidOf(w, 'tenant-a', digestOfLong)]).size,
  })),
  step("deleting tenant-b's long claim leaves tenant-a's", `tenant-b: DELETE long; tenant-a: GET long`, { code: 200, object: `tenant-a/${longName}` }, async (w) => {
    const deleted = await w.as('tenant-b', 'aggregator', { method: 'DELETE', path: `${claims('tenant-b')}/${longName}` });
    if (deleted.status !== 200) return statusOf(deleted);
    return objectOf(await w.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}/${longName}` }));
  }),
  step(
    "a record planted under tenant-a's naming but labelled for tenant-b is nobody's",
    `admin: POST ${recordsPath} tenant-a.planted {namespace label: tenant-b}; tenant-a and tenant-b: GET planted`,
    { created: 201, 'tenant-a': notFound('hostclaims', 'planted'), 'tenant-b': notFound('hostclaims', 'planted') },
    async (w) => {
      const created = await w.env.controlPlane.request('POST', recordsPath, record('tenant-a.planted', 'tenant-b', 'planted'));
      return {
        created: created.status,
        'tenant-a': statusOf(await w.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}/planted` })),
        'tenant-b': statusOf(await w.as('tenant-b', 'aggregator', { path: `${claims('tenant-b')}/planted` })),
      };
    },
  ),
  step("the planted record is not served from the cache either", `tenant-a: GET ${claims('tenant-a')}/planted?resourceVersion=0`, notFound('hostclaims', 'planted'), async (w) =>
    statusOf(await w.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}/planted?resourceVersion=0` })),
  ),
  // The name is taken in storage, so a create cannot succeed; it is refused as kube refuses a taken name, and the record stays as it was.
  step("creating the planted record's claim name is refused as taken", `tenant-a: POST ${claims('tenant-a')} name=planted`, { code: 409, reason: 'AlreadyExists', message: 'hostclaims.tenancy.metal3.io "planted" already exists' }, (w) => create(w, 'tenant-a', 'tenant-a', 'planted')),
  step(
    'a record named for tenant-b whose name annotation differs is nobody’s',
    `admin: POST ${recordsPath} tenant-b.decoy {namespace label: tenant-b, name: bravo-one}; tenant-b: list`,
    { created: 201, list: { code: 200, names: ['tenant-b/bravo-one', 'tenant-b/bravo-two'] } },
    async (w) => {
      const created = await w.env.controlPlane.request('POST', recordsPath, record('tenant-b.decoy', 'tenant-b', 'bravo-one'));
      return { created: created.status, list: namesOf(await w.as('tenant-b', 'aggregator', { path: `${claims('tenant-b')}?labelSelector=app` })) };
    },
  ),
  step('planted records appear in no tenant list', `tenant-a, tenant-b: GET ${claims('tenant-a')}, ${claims('tenant-b')}`, { 'tenant-a': ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two', `tenant-a/${digestOfLong}`, `tenant-a/${longName}`, 'tenant-a/twin'], 'tenant-b': ['tenant-b/bravo-one', 'tenant-b/bravo-two'] }, async (w) => ({
    'tenant-a': (namesOf(await w.as('tenant-a', 'direct', { path: claims('tenant-a') }))['names']) ?? 'refused',
    'tenant-b': (namesOf(await w.as('tenant-b', 'direct', { path: claims('tenant-b') }))['names']) ?? 'refused',
  })),
];

export const names: CaseGroup = { name: 'names built to collide in the storage mapping', cases };
