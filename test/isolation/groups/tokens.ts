/**
 * Continue tokens and resourceVersions carried from one user, namespace,
 * list or kind to another. Our continue tokens are sealed and bound to the
 * list they were issued for (src/backing/continue-token.ts,
 * src/resources/hardwaredata/continue-token.ts): replayed anywhere else they
 * are kube's 400 `invalid continue token`. resourceVersions are one etcd
 * revision space shared by every namespace, so a tenant can name one of
 * another tenant's: reads at it still show only its own objects, and writes
 * with it are kube's 409 about the tenant's own object.
 */
import { badRequest, conflict, forbidden, invalid, namesOf, optimisticLock, statusOf, contentTypes, type CaseGroup, type IsolationCase, type Outcome } from '../cases.js';
import { GROUP_PATH, type Actor, type World } from '../world.js';

const claims = (namespace: string): string => `${GROUP_PATH}/namespaces/${namespace}/hostclaims`;
const hardware = (namespace: string): string => `${GROUP_PATH}/namespaces/${namespace}/hardwaredata`;
const anotherList = badRequest('invalid continue token: continue key is not valid: it was issued for another list');
const notValid = badRequest('invalid continue token: continue key is not valid');
/** A token of the other kind opens (same key) but carries the other kind's version. */
const otherKind = badRequest('invalid continue token: continue key is not valid: server does not recognize this encoded version');

/** The continue token of the first page of one object. */
async function tokenOf(world: World, actor: Actor, collection: string, query = ''): Promise<string> {
  const response = await world.as(actor, 'aggregator', { path: `${collection}?limit=1${query}` });
  const token = (response.json as { metadata?: { continue?: string } } | undefined)?.metadata?.continue;
  if (token === undefined || token === '') throw new Error(`no continue token from ${collection}: ${response.body}`);
  return token;
}

interface Replay {
  readonly name: string;
  readonly issuer: Actor;
  readonly issuedOn: string;
  readonly issuedQuery?: string;
  readonly replayer: Actor;
  readonly via?: 'aggregator' | 'direct';
  readonly replayedOn: string;
  readonly replayedQuery?: string;
  readonly tamper?: (token: string) => string;
  readonly expected: Outcome;
}

function replayCase(replay: Replay): IsolationCase {
  const via = replay.via ?? 'aggregator';
  return {
    name: replay.name,
    request: `${replay.issuer} lists ${replay.issuedOn}?limit=1${replay.issuedQuery ?? ''}; ${replay.replayer} via ${via}: GET ${replay.replayedOn}?limit=1&continue=<token>${replay.replayedQuery ?? ''}`,
    expected: replay.expected,
    run: async (world) => {
      const issued = await tokenOf(world, replay.issuer, replay.issuedOn, replay.issuedQuery);
      const token = replay.tamper === undefined ? issued : replay.tamper(issued);
      const path = `${replay.replayedOn}?limit=1&continue=${encodeURIComponent(token)}${replay.replayedQuery ?? ''}`;
      return namesOf(await world.as(replay.replayer, via, { path }));
    },
  };
}

const app = '&labelSelector=app';
const replays: IsolationCase[] = [
  replayCase({ name: 'control: tenant-a continues its own list', issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'tenant-a', replayedOn: claims('tenant-a'), replayedQuery: app, expected: { code: 200, names: ['tenant-a/alpha-three'] } }),
  replayCase({ name: "tenant-a's token replayed by tenant-b in tenant-b", issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'tenant-b', replayedOn: claims('tenant-b'), replayedQuery: app, expected: anotherList }),
  replayCase({ name: "tenant-a's token replayed by tenant-b in tenant-b, directly", issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'tenant-b', via: 'direct', replayedOn: claims('tenant-b'), replayedQuery: app, expected: anotherList }),
  replayCase({ name: "tenant-a's token replayed by tenant-b in tenant-a", issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'tenant-b', replayedOn: claims('tenant-a'), replayedQuery: app, expected: forbidden({ user: 'tenant-b', verb: 'list', resource: 'hostclaims', namespace: 'tenant-a' }) }),
  replayCase({ name: "tenant-a's token replayed with another label selector", issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'tenant-a', replayedOn: claims('tenant-a'), replayedQuery: '&labelSelector=app%3Dalpha', expected: anotherList }),
  replayCase({ name: "tenant-a's token replayed without its label selector", issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'tenant-a', replayedOn: claims('tenant-a'), expected: anotherList }),
  replayCase({ name: "tenant-a's token replayed cluster-wide by admin", issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'admin', replayedOn: `${GROUP_PATH}/hostclaims`, replayedQuery: app, expected: anotherList }),
  replayCase({ name: "tenant-b's token replayed by tenant-a in tenant-a", issuer: 'tenant-b', issuedOn: claims('tenant-b'), issuedQuery: app, replayer: 'tenant-a', replayedOn: claims('tenant-a'), replayedQuery: app, expected: anotherList }),
  replayCase({ name: "admin's cluster-wide token replayed by tenant-a in tenant-a", issuer: 'admin', issuedOn: `${GROUP_PATH}/hostclaims`, issuedQuery: app, replayer: 'tenant-a', replayedOn: claims('tenant-a'), replayedQuery: app, expected: anotherList }),
  replayCase({ name: "tenant-a's HostClaim token replayed on HardwareData", issuer: 'tenant-a', issuedOn: claims('tenant-a'), issuedQuery: app, replayer: 'tenant-a', replayedOn: hardware('tenant-a'), expected: otherKind }),
  replayCase({ name: "tenant-a's HardwareData token replayed on HostClaims", issuer: 'tenant-a', issuedOn: hardware('tenant-a'), replayer: 'tenant-a', replayedOn: claims('tenant-a'), expected: otherKind }),
  replayCase({ name: "tenant-a's HardwareData token replayed by tenant-b in tenant-b", issuer: 'tenant-a', issuedOn: hardware('tenant-a'), replayer: 'tenant-b', replayedOn: hardware('tenant-b'), expected: anotherList }),
  replayCase({ name: 'control: tenant-a continues its HardwareData list', issuer: 'tenant-a', issuedOn: hardware('tenant-a'), replayer: 'tenant-a', replayedOn: hardware('tenant-a'), expected: { code: 200, names: ['tenant-a/hosts-a.host-a2'] } }),
  replayCase({
    name: "tenant-a's token with one character changed",
    issuer: 'tenant-a',
    issuedOn: claims('tenant-a'),
    issuedQuery: app,
    replayer: 'tenant-a',
    replayedOn: claims('tenant-a'),
    replayedQuery: app,
    tamper: (token) => `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`,
    expected: notValid,
  }),
];

/** kube-apiserver's own token format, naming tenant-b's record as the start key. */
const kubeToken = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start: '/tenant-b.bravo-one\u0000' })).toString('base64');
const forged: IsolationCase[] = [
  {
    name: "kube-format token naming tenant-b's record",
    request: `tenant-a via aggregator: GET ${claims('tenant-a')}?limit=1&continue=<base64 {"v":"meta.k8s.io/v1","rv":1,"start":"/tenant-b.bravo-one\\0"}>`,
    expected: notValid,
    run: async (world) => statusOf(await world.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}?limit=1&continue=${encodeURIComponent(kubeToken)}` })),
  },
];

interface Known {
  readonly uid: string;
  readonly resourceVersion: string;
}

async function metaOf(world: World, actor: Actor, namespace: string, name: string): Promise<Known & { body: Record<string, unknown> }> {
  const response = await world.as(actor, 'aggregator', { path: `${claims(namespace)}/${name}` });
  const body = response.json as { metadata: Known };
  return { uid: body.metadata.uid, resourceVersion: body.metadata.resourceVersion, body: response.json as Record<string, unknown> };
}

/** Replaces the two objects' uids and resourceVersions by placeholders, so that the outcome is stable. */
function placeholders(outcome: Outcome, known: Record<string, Known>): Outcome {
  let text = JSON.stringify(outcome);
  for (const [label, meta] of Object.entries(known)) {
    text = text.replaceAll(meta.uid, `<${label} uid>`).replaceAll(`(${meta.resourceVersion})`, `(<${label} rv>)`);
  }
  return JSON.parse(text) as Outcome;
}

function foreignVersionCase(name: string, describe: string, expected: Outcome, act: (world: World, alpha: Known & { body: Record<string, unknown> }, bravo: Known) => Promise<Outcome>): IsolationCase {
  return {
    name,
    request: `tenant-a via aggregator: ${describe}`,
    expected,
    run: async (world) => {
      const alpha = await metaOf(world, 'tenant-a', 'tenant-a', 'alpha-one');
      const bravo = await metaOf(world, 'admin', 'tenant-b', 'bravo-one');
      return placeholders(await act(world, alpha, bravo), { 'alpha-one': alpha, 'bravo-one': bravo });
    },
  };
}

const alphaOne = `${claims('tenant-a')}/alpha-one`;
const withMeta = (body: Record<string, unknown>, meta: Record<string, string>): string => {
  const metadata = body['metadata'] as Record<string, unknown>;
  return JSON.stringify({ ...body, metadata: { ...metadata, ...meta } });
};
/** k8s.io/apiserver registry/rest/delete.go words a failed delete precondition with the kind as resource. */
const deleteConflict = (detail: string): Outcome => ({ code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled on HostClaim.tenancy.metal3.io "alpha-one": ${detail}` });
const storageUid = (precondition: string, actual: string): string =>
  `StorageError: invalid object, Code: 4, Key: /registry/tenancy.metal3.io/hostclaims/tenant-a/alpha-one, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${precondition}, UID in object meta: ${actual}`;

const versions: IsolationCase[] = [
  foreignVersionCase('list at the resourceVersion of a tenant-b object (NotOlderThan)', `GET ${claims('tenant-a')}?labelSelector=app&resourceVersion=<bravo-one rv>&resourceVersionMatch=NotOlderThan`, { code: 200, names: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two'] }, async (world, _a, bravo) =>
    namesOf(await world.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}?labelSelector=app&resourceVersion=${bravo.resourceVersion}&resourceVersionMatch=NotOlderThan` })),
  ),
  foreignVersionCase('list at the resourceVersion of a tenant-b object (Exact)', `GET ${claims('tenant-a')}?labelSelector=app&resourceVersion=<bravo-one rv>&resourceVersionMatch=Exact`, { code: 200, names: ['tenant-a/alpha-one', 'tenant-a/alpha-three', 'tenant-a/alpha-two'] }, async (world, _a, bravo) =>
    namesOf(await world.as('tenant-a', 'aggregator', { path: `${claims('tenant-a')}?labelSelector=app&resourceVersion=${bravo.resourceVersion}&resourceVersionMatch=Exact` })),
  ),
  foreignVersionCase('get own claim at the resourceVersion of a tenant-b object', `GET ${alphaOne}?resourceVersion=<bravo-one rv>`, { code: 200, names: ['tenant-a/alpha-one'] }, async (world, _a, bravo) => {
    const response = await world.as('tenant-a', 'aggregator', { path: `${alphaOne}?resourceVersion=${bravo.resourceVersion}` });
    const body = response.json as { metadata?: { namespace: string; name: string } };
    return response.status === 200 ? { code: 200, names: [`${body.metadata?.namespace ?? ''}/${body.metadata?.name ?? ''}`] } : statusOf(response);
  }),
  foreignVersionCase('update own claim with the resourceVersion of a tenant-b object', `PUT ${alphaOne} (metadata.resourceVersion=<bravo-one rv>)`, conflict('alpha-one', optimisticLock), async (world, alpha, bravo) =>
    statusOf(await world.as('tenant-a', 'aggregator', { method: 'PUT', path: alphaOne, headers: { 'Content-Type': contentTypes.json }, body: withMeta(alpha.body, { resourceVersion: bravo.resourceVersion }) })),
  ),
  foreignVersionCase('merge patch own claim with the resourceVersion of a tenant-b object', `PATCH ${alphaOne} {"metadata":{"resourceVersion":"<bravo-one rv>"}}`, conflict('alpha-one', optimisticLock), async (world, _a, bravo) =>
    statusOf(await world.as('tenant-a', 'aggregator', { method: 'PATCH', path: alphaOne, headers: { 'Content-Type': contentTypes.merge }, body: JSON.stringify({ metadata: { resourceVersion: bravo.resourceVersion, labels: { x: 'y' } } }) })),
  ),
  foreignVersionCase('update own claim with the uid of a tenant-b object', `PUT ${alphaOne} (metadata.uid=<bravo-one uid>)`, conflict('alpha-one', storageUid('<bravo-one uid>', '<alpha-one uid>')), async (world, alpha, bravo) =>
    statusOf(await world.as('tenant-a', 'aggregator', { method: 'PUT', path: alphaOne, headers: { 'Content-Type': contentTypes.json }, body: withMeta(alpha.body, { uid: bravo.uid }) })),
  ),
  // A patch carries no uid precondition (kube's patcher passes no object to DefaultUpdatedObjectInfo): the uid is validated as immutable.
  foreignVersionCase('merge patch own claim with the uid of a tenant-b object', `PATCH ${alphaOne} {"metadata":{"uid":"<bravo-one uid>"}}`, invalid('alpha-one', 'metadata.uid: Invalid value: "<bravo-one uid>": field is immutable'), async (world, _a, bravo) =>
    statusOf(await world.as('tenant-a', 'aggregator', { method: 'PATCH', path: alphaOne, headers: { 'Content-Type': contentTypes.merge }, body: JSON.stringify({ metadata: { uid: bravo.uid } }) })),
  ),
  foreignVersionCase('delete own claim with a uid precondition of a tenant-b object', `DELETE ${alphaOne} {"preconditions":{"uid":"<bravo-one uid>"}}`, deleteConflict('the UID in the precondition (<bravo-one uid>) does not match the UID in record (<alpha-one uid>). The object might have been deleted and then recreated'), async (world, _a, bravo) =>
    statusOf(await world.as('tenant-a', 'aggregator', { method: 'DELETE', path: alphaOne, headers: { 'Content-Type': contentTypes.json }, body: JSON.stringify({ preconditions: { uid: bravo.uid } }) })),
  ),
  foreignVersionCase(
    'delete own claim with a resourceVersion precondition of a tenant-b object',
    `DELETE ${alphaOne} {"preconditions":{"resourceVersion":"<bravo-one rv>"}}`,
    deleteConflict('the ResourceVersion in the precondition (<bravo-one rv>) does not match the ResourceVersion in record (<alpha-one rv>). The object might have been modified'),
    async (world, _a, bravo) =>
      statusOf(await world.as('tenant-a', 'aggregator', { method: 'DELETE', path: alphaOne, headers: { 'Content-Type': contentTypes.json }, body: JSON.stringify({ preconditions: { resourceVersion: bravo.resourceVersion } }) })),
  ),
];

/** Changes one claim of each tenant after `from`, then watches from `from` as `watcher` until the server ends the watch. */
async function watchedAfter(world: World, watcher: 'tenant-a' | 'tenant-b', round: string): Promise<Outcome> {
  const from = (await world.as('admin', 'aggregator', { path: `${GROUP_PATH}/hostclaims?limit=1` })).json as { metadata: { resourceVersion: string } };
  for (const [tenant, name] of [['tenant-a', 'alpha-two'], ['tenant-b', 'bravo-two']] as const) {
    const patched = await world.as(tenant, 'aggregator', { method: 'PATCH', path: `${claims(tenant)}/${name}`, headers: { 'Content-Type': contentTypes.merge }, body: JSON.stringify({ metadata: { labels: { round } } }) });
    if (patched.status !== 200) return statusOf(patched);
  }
  const response = await world.as(watcher, 'aggregator', { path: `${claims(watcher)}?watch=true&timeoutSeconds=2&resourceVersion=${from.metadata.resourceVersion}` });
  const events = response.body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; object: { metadata: { namespace?: string; name?: string; labels?: Record<string, string> } } })
    .filter((event) => event.object.metadata.labels?.['round'] === round)
    .map((event) => `${event.type} ${event.object.metadata.namespace ?? ''}/${event.object.metadata.name ?? ''}`);
  return { code: response.status, events: [...new Set(events)] };
}

const watches: IsolationCase[] = [
  {
    name: 'tenant-a watches from a revision before changes in both namespaces',
    request: `tenant-a via aggregator: GET ${claims('tenant-a')}?watch=true&resourceVersion=<before a change of alpha-two and bravo-two>`,
    expected: { code: 200, events: ['MODIFIED tenant-a/alpha-two'] },
    run: (world) => watchedAfter(world, 'tenant-a', 'one'),
  },
  {
    name: 'tenant-b watches from a revision before changes in both namespaces',
    request: `tenant-b via aggregator: GET ${claims('tenant-b')}?watch=true&resourceVersion=<before a change of alpha-two and bravo-two>`,
    expected: { code: 200, events: ['MODIFIED tenant-b/bravo-two'] },
    run: (world) => watchedAfter(world, 'tenant-b', 'two'),
  },
];

export const tokens: CaseGroup = { name: 'continue tokens and resourceVersions replayed', cases: [...replays, ...forged, ...versions, ...watches] };
