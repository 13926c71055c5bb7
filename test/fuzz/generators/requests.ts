/**
 * Query parameters, headers and URL paths, each on an otherwise valid
 * request of every verb. A collection-wide DELETE is always narrowed to the
 * worker's own objects by a `fuzz-worker` label selector.
 */
import fc from 'fast-check';
import type { FuzzCase } from '../model.js';
import { size } from '../values.js';
import { COLLECTION, harmlessMergePatch, headerSafe, headerText, namespace, OBJECT, route, validCreate, validUpdate } from './common.js';

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
}

const operations: readonly Operation[] = [
  { method: 'GET', path: COLLECTION },
  { method: 'GET', path: OBJECT },
  { method: 'GET', path: `/apis/tenancy.metal3.io/v1alpha1/hostclaims` },
  { method: 'POST', path: COLLECTION, body: validCreate(), contentType: 'application/json' },
  { method: 'PUT', path: OBJECT, body: validUpdate(), contentType: 'application/json' },
  { method: 'PATCH', path: OBJECT, body: harmlessMergePatch, contentType: 'application/merge-patch+json' },
  { method: 'PATCH', path: OBJECT, body: validUpdate(), contentType: 'application/apply-patch+yaml' },
  { method: 'DELETE', path: OBJECT },
  { method: 'DELETE', path: COLLECTION },
];
const operation = fc.constantFrom(...operations);

const contentTypeHeader = (op: Operation): Record<string, string> => (op.contentType === undefined ? {} : { 'Content-Type': op.contentType });

const hostileText = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', ' ', '-1', '0', '1', '1.5', '0x10', 'true', 'null', '%', '%zz', '\u0000', '9999999999999999999', '18446744073709551616'));

/** Per parameter, values kube distinguishes, and any hostile text. */
const PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  labelSelector: ['a=b', 'a in (b,c)', '!a', 'a notin ()', 'a in (', '=', 'a=b=c', 'A_/b=c', `${'x'.repeat(70)}=a`, 'a>1', 'a<x', '!!a', 'fuzz-worker={worker}', 'a,,b', 'a==b,c!=d'],
  fieldSelector: ['metadata.name={obj}', 'metadata.name={obj}\\,x', 'metadata.namespace={other}', 'spec.poweredOn=true', 'status.phase=x', 'metadata.name!=a', 'a==b', '=', 'metadata.name=', `metadata.name=${'a'.repeat(300)}`, 'metadata.uid=x'],
  resourceVersion: ['0', '1', '-1', 'abc', '99999999999', '18446744073709551616', ' 1', '01'],
  resourceVersionMatch: ['NotOlderThan', 'Exact', 'bogus', 'exact'],
  limit: ['-1', '0', '1', '500', 'abc', '99999999999999999999', '1.5'],
  continue: ['x', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5OTk5OTksInN0YXJ0IjoiLi4vIn0', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiXHUwMDAwIn0', '%%%'],
  timeoutSeconds: ['-1', '0', '1', 'abc', '9999999999999999999', '1.5', '1s'],
  fieldValidation: ['Strict', 'Warn', 'Ignore', 'bogus', 'strict'],
  dryRun: ['All', 'all', 'Bogus', ''],
  propagationPolicy: ['Foreground', 'Background', 'Orphan', 'bogus', 'foreground'],
  gracePeriodSeconds: ['-1', '0', '30', 'abc', '9999999999999999999', '1.5'],
  orphanDependents: ['true', 'false', 'bogus'],
  fieldManager: ['fuzz', '', 'équipe', 'x'.repeat(129), 'a\u0000b', 'kubectl'],
  force: ['true', 'false', 'bogus'],
  pretty: ['true', 'bogus'],
  allowWatchBookmarks: ['true', 'bogus'],
  sendInitialEvents: ['true', 'false', 'bogus'],
};

const parameter = fc.tuple(fc.constantFrom(...Object.keys(PARAMETERS)), fc.boolean(), hostileText, fc.nat({ max: 4 }).map((n) => n === 0)).map(([name, known, text, raw]) => {
  const choices = PARAMETERS[name] ?? [];
  const chosen = known && choices.length > 0 ? choices[text.length % choices.length] ?? text : text;
  // Mostly encoded as a client would; sometimes as is (Node only refuses control characters and spaces, replaced here).
  return `${name}=${raw ? chosen.replace(/[^\x21-\x7e]/g, '%') : encodeURIComponent(chosen)}`;
});

/** A watch is kept to one second, so that a valid one ends by itself. */
const watchParameter = fc.option(fc.constantFrom('true', '1', 'false', 'bogus', ''), { freq: 8 }).map((w) => (w === null ? [] : ['timeoutSeconds=1', `watch=${w}`]));

function narrowedToWorker(op: Operation, parameters: readonly string[]): readonly string[] {
  if (op.method !== 'DELETE' || op.path !== COLLECTION) return parameters;
  const selector = parameters.find((p) => p.startsWith('labelSelector='));
  const rest = parameters.filter((p) => !p.startsWith('labelSelector='));
  const extra = selector === undefined ? '' : `,${selector.slice('labelSelector='.length)}`;
  return [`labelSelector=fuzz-worker%3D{worker}${extra}`, ...rest];
}

function request(op: Operation, ns: string, query: readonly string[]): Pick<FuzzCase, 'method' | 'path' | 'body' | 'comparable' | 'sender'> {
  const path = op.path.replace('{ns}', ns);
  return {
    method: op.method,
    path: query.length === 0 ? path : `${path}?${query.join('&')}`,
    ...(op.body === undefined ? {} : { body: { text: op.body } }),
    sender: 'tenant',
    comparable: true,
  };
}

export const queryCase: fc.Arbitrary<FuzzCase> = fc
  .tuple(operation, namespace, route, fc.array(parameter, { minLength: 1, maxLength: 4 }), watchParameter)
  .map(([op, ns, via, parameters, watch]) => ({
    family: 'query',
    route: via,
    headers: contentTypeHeader(op),
    ...request(op, ns, narrowedToWorker(op, op.method === 'GET' ? [...watch, ...parameters] : parameters)),
  }));

const mediaType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/yaml',
    'application/vnd.kubernetes.protobuf',
    '*/*',
    'application/*',
    'text/html',
    '*/*;q=0',
    'application/json;q=0',
    'application/json;as=Table;v=v1;g=meta.k8s.io',
    'application/json;as=Table;v=v1beta1;g=meta.k8s.io',
    'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
    'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
    'application/json;as=Bogus;v=v1;g=meta.k8s.io',
    'application/json;stream=watch',
    'application/json, text/plain;q=0.5',
    'application/json;q=abc',
    ';;;',
    '',
    'application/',
  ),
  fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 })).map(([type, sub, params]) => headerSafe(`${type}/${sub};${params}`)),
);

const contentType = fc.oneof(mediaType, fc.constantFrom('application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain', 'application/merge-patch+json', 'application/apply-patch+yaml'));

/** Extra headers, up to three: identity headers (forged through the aggregator, asserted on the direct path), impersonation, size, repetition, upgrades. */
const extraHeader: fc.Arbitrary<readonly [string, string | readonly string[]]> = fc.oneof(
  fc.tuple(fc.constantFrom('X-Remote-User', 'X-Remote-Uid', 'X-Remote-Extra-A%2Fb', 'x-remote-user', 'Impersonate-User', 'Impersonate-Uid'), headerText),
  fc.tuple(fc.constantFrom('X-Remote-User', 'X-Remote-Group', 'X-Remote-Extra-Scopes', 'Impersonate-Group'), fc.array(headerText, { minLength: 1, maxLength: 3 })),
  fc.tuple(fc.constant('Authorization'), fc.constantFrom('Bearer garbage', 'Bearer ', 'Basic YTpi', 'garbage')),
  fc.tuple(fc.constant('X-Fuzz-Large'), size(200_000).map((n) => 'x'.repeat(n * 1_000 > 200_000 ? n : n * 1_000))),
  fc.tuple(fc.constant('X-Fuzz-Repeated'), fc.integer({ min: 2, max: 400 }).map((n) => Array.from({ length: n }, (_, i) => `v${i}`))),
  fc.tuple(fc.constant('Upgrade'), fc.constantFrom('websocket', 'h2c', 'SPDY/3.1')),
);
const extraHeaders = fc.array(extraHeader, { maxLength: 3 }).map((entries) => Object.fromEntries(entries));

export const headersCase: fc.Arbitrary<FuzzCase> = fc.tuple(operation, namespace, route, fc.option(mediaType, { freq: 3 }), fc.option(contentType, { freq: 3 }), extraHeaders).map(([op, ns, via, accept, type, extra]) => {
  const headers: Record<string, string | readonly string[]> = { ...extra };
  if (accept !== null) headers.Accept = accept;
  if (op.contentType !== undefined) headers['Content-Type'] = type ?? op.contentType;
  if (headers.Upgrade !== undefined) headers.Connection = 'Upgrade';
  return { family: 'headers', route: via, headers, ...request(op, ns, narrowedToWorker(op, [])) };
});

const segmentVariant = fc.oneof(
  fc.constantFrom('.', '..', '%2e', '%2E%2e', '%2e%2E', '', '%2f', '%2F..', '%252f', '%252e', '%00', '%zz', '%', '%C3%A9', '%FF', 'a%20b', 'a%2Db', 'A', '-a', 'a.', 'a_b', '{obj}%2F..', '{obj}.', '{obj}%00', '~', ';', 'a;b=c', '{other}', 'status', 'hostclaims', 'hardwaredata'),
  fc.integer({ min: 1, max: 10_000 }).map((n) => 'a'.repeat(n)),
  fc.string({ maxLength: 8 }).map((s) => encodeURIComponent(s)),
);

type PathMutation = { readonly kind: 'insert' | 'replace'; readonly at: number; readonly segment: string } | { readonly kind: 'encode' | 'double-encode' | 'upper'; readonly at: number } | { readonly kind: 'prefix'; readonly text: string } | { readonly kind: 'suffix'; readonly text: string };

const pathMutation: fc.Arbitrary<PathMutation> = fc.oneof(
  fc.record({ kind: fc.constantFrom('insert' as const, 'replace' as const), at: fc.nat({ max: 8 }), segment: segmentVariant }),
  fc.record({ kind: fc.constantFrom('encode' as const, 'double-encode' as const, 'upper' as const), at: fc.nat({ max: 8 }) }),
  fc.record({ kind: fc.constant('prefix' as const), text: fc.constantFrom('/', '//evil', '/.', '/%2e', '/./') }),
  fc.record({ kind: fc.constant('suffix' as const), text: fc.constantFrom('/', '//', '/.', '/..', '?', '#x', '%', '?x=%zz', ';x') }),
);

const percentEncodeAll = (s: string): string => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** Applies one mutation to a path of segments; `{...}` placeholders are kept whole by encodings. */
function applyMutation(path: string, m: PathMutation): string {
  if (m.kind === 'prefix') return `${m.text}${path}`;
  if (m.kind === 'suffix') return `${path}${m.text}`;
  const segments = path.split('/');
  const at = 1 + (m.at % Math.max(1, segments.length - 1));
  const current = segments[at] ?? '';
  const keep = (f: (s: string) => string): string => (current.startsWith('{') ? current : f(current));
  switch (m.kind) {
    case 'insert':
      segments.splice(at, 0, m.segment);
      break;
    case 'replace':
      segments[at] = m.segment;
      break;
    case 'encode':
      segments[at] = keep(percentEncodeAll);
      break;
    case 'double-encode':
      segments[at] = keep((s) => percentEncodeAll(s).replaceAll('%', '%25'));
      break;
    case 'upper':
      segments[at] = keep((s) => s.toUpperCase());
      break;
  }
  return segments.join('/');
}

const pathBases = fc.constantFrom(
  { path: OBJECT, comparable: true },
  { path: OBJECT, comparable: true },
  { path: COLLECTION, comparable: true },
  { path: `${OBJECT}/status`, comparable: true },
  { path: '/apis/tenancy.metal3.io/v1alpha1/hostclaims', comparable: true },
  { path: '/apis/tenancy.metal3.io/v1alpha1', comparable: true },
  { path: '/apis/tenancy.metal3.io/v1alpha1/hardwaredata', comparable: false },
  { path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/{ns}/hardwaredata/{obj}', comparable: false },
);

const pathMethods = fc.constantFrom(...operations.filter((op) => op.path === OBJECT), { method: 'POST', path: COLLECTION, body: validCreate(), contentType: 'application/json' }, { method: 'HEAD', path: OBJECT }, { method: 'OPTIONS', path: OBJECT });

export const pathCase: fc.Arbitrary<FuzzCase> = fc.tuple(pathBases, pathMethods, route, fc.array(pathMutation, { minLength: 1, maxLength: 3 })).map(([base, op, via, mutations]) => ({
  family: 'path',
  route: via,
  // Status writes need the admin (tenant roles do not grant them); everything else is the tenant.
  sender: base.path.endsWith('/status') && op.method !== 'GET' ? 'admin' : 'tenant',
  method: op.method,
  path: mutations.reduce(applyMutation, base.path),
  headers: contentTypeHeader(op),
  ...(op.body === undefined ? {} : { body: { text: op.body } }),
  comparable: base.comparable,
}));
