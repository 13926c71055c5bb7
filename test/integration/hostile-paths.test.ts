/**
 * Hostile request paths (issue 15, item 1): `.`, `..`, `%2e`, `%2E%2e`,
 * `%2f`, double encoding, empty segments, `//` and trailing slashes in every
 * position of every route (discovery, collection, object, status), for every
 * verb, dry-run or not, sent raw (no client normalises them) through
 * kube-apiserver and directly to the server with front-proxy headers.
 *
 * The reference is kube-apiserver serving the same path on a CRD with the
 * same kind, plural and schema (test/support/reference-crd.ts), in the same
 * run: every answer must equal it (code, reason, message, details), and a
 * write must change exactly what it changed on the CRD (which objects were
 * created, modified or deleted), so no request acts on another object or
 * collection than the one kube-apiserver authorized.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { rawClients, type RawClients, type RawRequest, type RawResponse } from '../support/raw-http.js';
import { fromReference, installReferenceCrd, REFERENCE_GROUP, SERVED_GROUP } from '../support/reference-crd.js';

const binDir = inject('controlPlaneBinDir');
const NAMESPACE = 'tenant-a';
const TARGET = 'keep-1';
const FIXTURES = [TARGET, 'keep-2'] as const;
const POSTED = 'posted';
const HOSTILE = ['.', '..', '%2e', '%2E%2e', '%2f', '%252F', ''] as const;
/** What a tenant must never see: the backing kind, group, storage namespace and record names (`<ns>.<name>`). */
const BACKING_NAMES = ['HostClaimRecord', 'infra.tenancy.metal3.io', 'hostclaim-system', ...[TARGET, 'keep-2', 'posted'].map((name) => `${NAMESPACE}.${name}`)];

type Group = typeof SERVED_GROUP | typeof REFERENCE_GROUP;
type Route = 'aggregator' | 'direct';

/** A path as segments after the leading slash, with `{g}` for the group. */
const SHAPES: Record<string, readonly string[]> = {
  group: ['apis', '{g}'],
  version: ['apis', '{g}', 'v1alpha1'],
  collection: ['apis', '{g}', 'v1alpha1', 'namespaces', NAMESPACE, 'hostclaims'],
  object: ['apis', '{g}', 'v1alpha1', 'namespaces', NAMESPACE, 'hostclaims', TARGET],
  status: ['apis', '{g}', 'v1alpha1', 'namespaces', NAMESPACE, 'hostclaims', TARGET, 'status'],
};

/** Every hostile variant of a shape: each position replaced, preceded or suffixed by each token; trailing and leading slashes. */
function variants(segments: readonly string[]): string[] {
  const paths = new Set<string>();
  const join = (parts: readonly string[]): string => `/${parts.join('/')}`;
  for (let i = 1; i <= segments.length; i++) {
    for (const token of HOSTILE) {
      if (i < segments.length) paths.add(join(segments.map((s, j) => (j === i ? token : s))));
      paths.add(join([...segments.slice(0, i), token, ...segments.slice(i)]));
      if (i < segments.length) paths.add(join(segments.map((s, j) => (j === i ? `${s}${token === '' ? '/' : token}` : s))));
    }
  }
  const plain = join(segments);
  for (const extra of [`${plain}/`, `${plain}//`, `/${plain}`, `//evil${plain}`]) paths.add(extra);
  return [...paths];
}

interface Verb {
  readonly name: string;
  readonly method: string;
  readonly dryRun: boolean;
  readonly body?: (group: Group) => string;
  readonly contentType?: string;
}

const claimBody = (name: string) => (group: Group) =>
  JSON.stringify({ apiVersion: `${group}/v1alpha1`, kind: 'HostClaim', metadata: { name }, spec: { poweredOn: true } });
const labelPatch = (): string => JSON.stringify({ metadata: { labels: { touched: 'yes' } } });

const VERBS: readonly Verb[] = [
  { name: 'GET', method: 'GET', dryRun: false },
  ...[false, true].flatMap((dryRun): Verb[] => [
    { name: 'POST', method: 'POST', dryRun, body: claimBody(POSTED) },
    { name: 'PUT', method: 'PUT', dryRun, body: claimBody(TARGET) },
    { name: 'PATCH', method: 'PATCH', dryRun, body: labelPatch, contentType: 'application/merge-patch+json' },
    { name: 'DELETE', method: 'DELETE', dryRun },
  ]),
];

let env: DevEnvironment;
let clients: RawClients;

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `hostile-paths-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder' });
  clients = await rawClients(env);
  await installReferenceCrd(env);
});

afterAll(async () => {
  await env.stop();
});

function collectionOf(group: Group): string {
  return `/apis/${group}/v1alpha1/namespaces/${NAMESPACE}/hostclaims`;
}

/** name → resourceVersion of every claim in the namespace, read by the admin. */
async function snapshot(group: Group): Promise<Map<string, string>> {
  const response = await env.controlPlane.request('GET', collectionOf(group));
  if (response.status !== 200) throw new Error(`listing ${group}: ${response.status} ${response.body}`);
  const list = JSON.parse(response.body) as { items: { metadata: { name: string; resourceVersion: string } }[] };
  return new Map(list.items.map((i) => [i.metadata.name, i.metadata.resourceVersion]));
}

/** What a write did: every name created, modified or deleted. */
function effects(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  const changes: string[] = [];
  for (const name of [...names].sort()) {
    const was = before.get(name);
    const is = after.get(name);
    if (was === undefined) changes.push(`created ${name}`);
    else if (is === undefined) changes.push(`deleted ${name}`);
    else if (was !== is) changes.push(`modified ${name}`);
  }
  return changes;
}

/** Back to the fixtures (the claims named in FIXTURES, unlabelled) on one side. */
async function reset(group: Group): Promise<void> {
  const current = await snapshot(group);
  for (const name of current.keys()) {
    if (!(FIXTURES as readonly string[]).includes(name)) await env.controlPlane.request('DELETE', `${collectionOf(group)}/${name}`);
  }
  for (const name of FIXTURES) {
    if (!current.has(name)) {
      const created = await env.controlPlane.request('POST', collectionOf(group), JSON.parse(claimBody(name)(group)) as unknown);
      if (created.status !== 201) throw new Error(`creating ${name} in ${group}: ${created.status} ${created.body}`);
    }
  }
  await pollGone(group);
}

async function pollGone(group: Group): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const names = [...(await snapshot(group)).keys()].sort();
    if (names.join(',') === [...FIXTURES].sort().join(',')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${group}: fixtures not restored`);
}

interface Answer {
  readonly code: number;
  readonly [field: string]: unknown;
}

/** What must be equal: a Status in full (minus nothing), an object or list by kind, names and items. */
function answerOf(response: RawResponse, isReference: boolean): Answer {
  const text = isReference ? fromReference(response.body) : response.body;
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { code: response.status, text: text.trim() };
  }
  if (json['kind'] === 'Status') {
    const { reason, message, details } = json as { reason?: string; message?: string; details?: Record<string, unknown> };
    // A uid differs between any two objects; that one is present is compared.
    const uid = details?.['uid'] === undefined ? {} : { uid: 'present' };
    return { code: response.status, reason, message, details: details === undefined ? undefined : { ...details, ...uid } };
  }
  const metadata = json['metadata'] as { name?: string } | undefined;
  const items = json['items'] as { metadata: { name: string } }[] | undefined;
  return {
    code: response.status,
    kind: json['kind'],
    apiVersion: json['apiVersion'],
    name: metadata?.name,
    items: items?.map((i) => i.metadata.name).sort(),
  };
}

function requestFor(verb: Verb, shapePath: string, group: Group): RawRequest {
  const pathWithGroup = shapePath.replaceAll('{g}', group) + (verb.dryRun ? '?dryRun=All' : '');
  return {
    method: verb.method,
    path: pathWithGroup,
    ...(verb.body === undefined ? {} : { body: verb.body(group) }),
    headers: { 'Content-Type': verb.contentType ?? 'application/json' },
  };
}

function send(route: Route | 'reference', request: RawRequest): Promise<RawResponse> {
  if (route === 'direct') return clients.direct({ user: NAMESPACE }, request);
  return clients.viaAggregator(env.tenantKubeconfigPaths[NAMESPACE], request);
}

/** Answers that cannot be equal because kube-apiserver gives them itself for our group, and why. */
function knownDifference(route: Route, reference: Answer, ours: Answer): string | undefined {
  // kube's aggregator serves an APIService's group document itself, on fewer path spellings than crdHandler
  // (e.g. not `/apis/<group>//`); nothing is proxied to us for these.
  if (route === 'aggregator' && reference['kind'] === 'APIGroup' && ours.code === 404) return 'aggregator group discovery';
  return undefined;
}

interface Mismatch {
  readonly route: Route;
  readonly verb: string;
  readonly path: string;
  readonly reference: unknown;
  readonly ours: unknown;
}

async function compare(route: Route, verb: Verb, shapePath: string, mismatches: Mismatch[]): Promise<void> {
  const mutating = verb.method !== 'GET' && !verb.dryRun;
  const before = mutating ? await Promise.all([snapshot(REFERENCE_GROUP), snapshot(SERVED_GROUP)]) : undefined;
  const referenceResponse = await send('reference', requestFor(verb, shapePath, REFERENCE_GROUP));
  const ourResponse = await send(route, requestFor(verb, shapePath, SERVED_GROUP));
  const reference = answerOf(referenceResponse, true);
  const ours = answerOf(ourResponse, false);
  const label = `${verb.name}${verb.dryRun ? ' dryRun' : ''}`;
  const display = shapePath.replaceAll('{g}', SERVED_GROUP);
  if (JSON.stringify(reference) !== JSON.stringify(ours) && knownDifference(route, reference, ours) === undefined) {
    mismatches.push({ route, verb: label, path: display, reference, ours });
  }
  // kube-apiserver's own answers (e.g. its /apis root lists every group, the backing CRD's too) are not ours to judge.
  const leaked = leaks(ourResponse).filter((name) => !leaks(referenceResponse).includes(name));
  if (leaked.length > 0) mismatches.push({ route, verb: `${label} (leak)`, path: display, reference: [], ours: leaked });
  if (before === undefined) return;
  const after = await Promise.all([snapshot(REFERENCE_GROUP), snapshot(SERVED_GROUP)]);
  const referenceEffects = effects(before[0], after[0]);
  const ourEffects = effects(before[1], after[1]);
  if (referenceEffects.join() !== ourEffects.join()) {
    mismatches.push({ route, verb: `${label} (effects)`, path: display, reference: referenceEffects, ours: ourEffects });
  }
  if (referenceEffects.length > 0 || ourEffects.length > 0) await Promise.all([reset(REFERENCE_GROUP), reset(SERVED_GROUP)]);
}

/** Backing names anywhere in a response a tenant gets: body, headers (Warning, Location…), continue tokens decoded. */
function leaks(response: RawResponse): string[] {
  const json = response.json as { metadata?: { continue?: string } } | undefined;
  const token = json?.metadata?.continue;
  const visible = [response.body, JSON.stringify(response.headers), token === undefined ? '' : Buffer.from(token, 'base64url').toString('utf8')].join('\n');
  return BACKING_NAMES.filter((name) => visible.includes(name));
}

async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await work(item);
      }
    }),
  );
}

describe.each<[Route]>([['aggregator'], ['direct']])('hostile paths %s', (route) => {
  beforeAll(async () => {
    await Promise.all([reset(REFERENCE_GROUP), reset(SERVED_GROUP)]);
  });

  it.each(Object.entries(SHAPES))('%s: every position, every token, every verb answers as kube on a CRD and changes what it changes', async (_shape, segments) => {
    const paths = variants(segments);
    const mismatches: Mismatch[] = [];
    // Reads and dry runs change nothing: in parallel; real writes one at a time, with the effects compared.
    const safe = VERBS.filter((v) => v.method === 'GET' || v.dryRun);
    const writes = VERBS.filter((v) => v.method !== 'GET' && !v.dryRun);
    await inParallel(
      safe.flatMap((verb) => paths.map((p) => [verb, p] as const)),
      6,
      ([verb, p]) => compare(route, verb, p, mismatches),
    );
    for (const verb of writes) for (const p of paths) await compare(route, verb, p, mismatches);
    // The fixtures are untouched unless the CRD's answer also touched them (checked per write above).
    expect(mismatches).toEqual([]);
  }, 900_000);
});

/**
 * The namespace a write names, as the admin (a tenant is refused by RBAC
 * before admission): namespaces that do not exist, cannot exist, are
 * encoded, or are being deleted reach NamespaceLifecycle admission on both
 * sides, which must answer alike and create nothing.
 */
describe('the namespace of a create', () => {
  const HELD = 'held-terminating';
  const NAMESPACES = ['nowhere', 'Bad_NS', `${NAMESPACE}%00`, `${NAMESPACE}%20`, 'a%2Fb', '..', '%2e%2e', HELD] as const;
  const adminDirect = { user: 'hostile-admin', groups: ['system:masters', 'system:authenticated'] };

  beforeAll(async () => {
    await Promise.all([reset(REFERENCE_GROUP), reset(SERVED_GROUP)]);
    const created = await env.controlPlane.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HELD, finalizers: ['hostile.test/hold'] } });
    expect(created.status).toBe(201);
    expect((await env.controlPlane.request('DELETE', `/api/v1/namespaces/${HELD}`)).status).toBe(200);
  });

  afterAll(async () => {
    const held = await env.controlPlane.requestJson<{ metadata: Record<string, unknown> }>('GET', `/api/v1/namespaces/${HELD}`);
    await env.controlPlane.request('PUT', `/api/v1/namespaces/${HELD}`, { ...held, metadata: { ...held.metadata, finalizers: [] } });
  });

  /** Every claim's namespace/name in the cluster, as the admin. */
  async function everyClaim(group: Group): Promise<string[]> {
    const response = await env.controlPlane.request('GET', `/apis/${group}/v1alpha1/hostclaims`);
    if (response.status !== 200) throw new Error(`listing ${group}: ${response.status} ${response.body}`);
    const list = JSON.parse(response.body) as { items: { metadata: { namespace: string; name: string } }[] };
    return list.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`).sort();
  }

  it.each(NAMESPACES.flatMap((namespace) => [false, true].map((dryRun) => [namespace, dryRun] as const)))(
    'POST into %s (dryRun %s) answers as on the CRD, on both routes, and creates nothing',
    async (namespace, dryRun) => {
      const request = (group: Group): RawRequest => ({
        method: 'POST',
        path: `/apis/${group}/v1alpha1/namespaces/${namespace}/hostclaims${dryRun ? '?dryRun=All' : ''}`,
        body: claimBody(POSTED)(group),
        headers: { 'Content-Type': 'application/json' },
      });
      const before = await Promise.all([everyClaim(REFERENCE_GROUP), everyClaim(SERVED_GROUP)]);
      const reference = answerOf(await clients.viaAggregator(env.adminKubeconfigPath, request(REFERENCE_GROUP)), true);
      const viaAggregator = answerOf(await clients.viaAggregator(env.adminKubeconfigPath, request(SERVED_GROUP)), false);
      const direct = answerOf(await clients.direct(adminDirect, request(SERVED_GROUP)), false);
      expect(reference.code).toBeGreaterThanOrEqual(400);
      expect(viaAggregator).toEqual(reference);
      expect(direct).toEqual(reference);
      expect(await Promise.all([everyClaim(REFERENCE_GROUP), everyClaim(SERVED_GROUP)])).toEqual(before);
    },
  );
});

describe('backing names never reach tenants', () => {
  const collection = (group: Group): string => collectionOf(group);
  const tenant = (request: RawRequest): Promise<RawResponse> => clients.viaAggregator(env.tenantKubeconfigPaths[NAMESPACE], request);

  beforeAll(async () => {
    await Promise.all([reset(REFERENCE_GROUP), reset(SERVED_GROUP)]);
  });

  it('pages with opaque continue tokens that name no record and list what the CRD lists', async () => {
    const pages = async (group: Group): Promise<{ names: string[]; tokens: string[] }> => {
      const names: string[] = [];
      const tokens: string[] = [];
      let token: string | undefined;
      do {
        const response = await tenant({ path: `${collection(group)}?limit=1${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}` });
        expect(response.status).toBe(200);
        if (group === SERVED_GROUP) expect(leaks(response)).toEqual([]);
        const list = response.json as { metadata: { continue?: string }; items: { metadata: { name: string } }[] };
        names.push(...list.items.map((i) => i.metadata.name));
        token = list.metadata.continue === '' ? undefined : list.metadata.continue;
        if (token !== undefined) tokens.push(token);
      } while (token !== undefined);
      return { names, tokens };
    };
    const [reference, ours] = await Promise.all([pages(REFERENCE_GROUP), pages(SERVED_GROUP)]);
    expect(ours.names).toEqual(reference.names);
    expect(ours.names).toEqual([...FIXTURES]);
    expect(ours.tokens).toHaveLength(1);
    // A token is bound to its list: another label selector gets kube's 400, naming nothing internal.
    const replay = await tenant({ path: `${collection(SERVED_GROUP)}?limit=1&labelSelector=x%3Dy&continue=${encodeURIComponent(ours.tokens[0] ?? '')}` });
    expect(answerOf(replay, false)).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: 'invalid continue token: continue key is not valid: it was issued for another list',
    });
  });

  it.each([
    [`?fieldSelector=${encodeURIComponent(`metadata.name=${TARGET}\\,x`)}`],
    [`?fieldSelector=${encodeURIComponent(`metadata.name=${TARGET}`)}&limit=1`],
    [`/x%252F..`],
    [`/x%3Fwatch=1`],
    [`/${TARGET}%23x`],
    [`/${'n'.repeat(300)}`],
  ])('%s answers as on the CRD, without backing names', async (suffix) => {
    const [reference, ours] = await Promise.all([tenant({ path: `${collection(REFERENCE_GROUP)}${suffix}` }), tenant({ path: `${collection(SERVED_GROUP)}${suffix}` })]);
    expect(answerOf(ours, false)).toEqual(answerOf(reference, true));
    expect(leaks(ours)).toEqual([]);
  });
});
