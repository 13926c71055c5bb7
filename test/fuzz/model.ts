/**
 * One generated request, as generators build it and as a report prints it.
 * Paths, headers and bodies carry placeholders that a worker resolves, so
 * that generated cases do not depend on which worker runs them:
 *   {ns}     the worker's tenant namespace (also the tenant it acts as)
 *   {other}  the other tenant's namespace
 *   {obj}    the worker's seeded HostClaim (exists before every write)
 *   {new}    a name no object has (fresh per case)
 *   {worker} the worker's label value (`fuzz-worker={worker}` on its objects)
 */
export const FAMILIES = ['body-json', 'body-yaml', 'patch-merge', 'patch-json', 'patch-strategic', 'patch-apply', 'query', 'headers', 'path'] as const;
export type Family = (typeof FAMILIES)[number];

/** `aggregator`: through kube-apiserver with the user's certificate; `direct`: to the server's port with the front-proxy certificate and X-Remote-* headers. */
export type Route = 'aggregator' | 'direct';

/** Who sends: the worker's tenant, or the cluster admin (tenant roles do not grant status writes). */
export type Sender = 'tenant' | 'admin';

export interface FuzzCase {
  readonly family: Family;
  readonly route: Route;
  readonly sender: Sender;
  readonly method: string;
  /** Path and query, sent as is after placeholders are resolved. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: Body;
  /** False where the reference CRD serves nothing comparable (HardwareData); only the structural oracle applies. */
  readonly comparable: boolean;
}

export interface Body {
  readonly text: string;
  /** Bytes spliced in at `at` (clamped to the text), e.g. invalid UTF-8. */
  readonly bytes?: { readonly at: number; readonly values: readonly number[] };
}

export interface Placeholders {
  readonly ns: string;
  readonly other: string;
  readonly obj: string;
  readonly new: string;
  readonly worker: string;
}

export function resolve(text: string, p: Placeholders): string {
  return text.replace(/\{(ns|other|obj|new|worker)\}/g, (_, key: keyof Placeholders) => p[key]);
}

export function bodyBytes(body: Body, p: Placeholders): Buffer {
  const text = Buffer.from(resolve(body.text, p), 'utf8');
  if (body.bytes === undefined) return text;
  const at = Math.min(body.bytes.at, text.length);
  return Buffer.concat([text.subarray(0, at), Buffer.from(body.bytes.values), text.subarray(at)]);
}

export const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A readable, bounded rendering of a case for reports (huge values abbreviated with their length). */
export function describeCase(c: FuzzCase): string {
  const headers = Object.entries(c.headers).map(([name, v]) => `  ${name}: ${abbreviate(Array.isArray(v) ? `[${v.length}×] ${String(v[0])}` : String(v))}`);
  const body = c.body === undefined ? [] : [`  body: ${abbreviate(c.body.text)}${c.body.bytes === undefined ? '' : ` (bytes ${JSON.stringify(c.body.bytes.values)} at ${c.body.bytes.at})`}`];
  return [`${c.family} via ${c.route} as ${c.sender}: ${c.method} ${abbreviate(c.path)}`, ...headers, ...body].join('\n');
}

export function abbreviate(text: string, max = 300): string {
  return text.length <= max ? JSON.stringify(text).slice(1, -1) : `${JSON.stringify(text.slice(0, max)).slice(1, -1)}… (${text.length} chars)`;
}
