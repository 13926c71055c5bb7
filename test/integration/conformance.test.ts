/**
 * Upstream api-machinery conformance steps ported to HostClaim, all through
 * the real aggregator as tenant-a in namespace tenant-a: watch resume,
 * selector transitions and 410 Expired (test/e2e/apimachinery/watch.go),
 * WatchList (watchlist.go), chunked lists (chunking.go), Table output
 * (table_conversion.go), fieldValidation and dryRun (field_validation.go),
 * and, over everything the tests saw, that no response names the backing
 * storage. Each block credits the upstream file it follows; the code is ours.
 */
import { randomBytes } from 'node:crypto';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { credentialsOf } from '../support/raw-http.js';

const binDir = inject('controlPlaneBinDir');
const NAMESPACE = 'tenant-a';
const COLLECTION = `/apis/tenancy.metal3.io/v1alpha1/namespaces/${NAMESPACE}/hostclaims`;
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io';
/** What a tenant must never see: the backing kind, group and storage namespace. */
const INTERNAL_NAMES = ['HostClaimRecord', 'infra.tenancy.metal3.io', 'hostclaim-system'] as const;
const run = randomBytes(3).toString('hex');

let env: DevEnvironment;
let tenantA: TlsCredentials;

type TlsCredentials = Awaited<ReturnType<typeof credentialsOf>>;

interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  continue?: string;
  remainingItemCount?: number;
}

interface KubeObject {
  kind?: string;
  apiVersion?: string;
  metadata?: ObjectMeta;
  spec?: Record<string, unknown>;
  [field: string]: unknown;
}

interface KubeList extends KubeObject {
  items: KubeObject[];
}

interface Status {
  kind?: string;
  status?: string;
  code?: number;
  reason?: string;
  message?: string;
}

interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  priority: number;
}

interface Table extends KubeObject {
  columnDefinitions?: TableColumnDefinition[] | null;
  rows: { cells: unknown[]; object?: KubeObject | null }[];
}

interface WatchEvent {
  type: string;
  object: KubeObject;
}

interface ApiResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Every response (status line, headers, body, watch event) the tests received, for the leak check. */
const transcript: { what: string; text: string }[] = [];

function record(what: string, text: string): void {
  transcript.push({ what, text });
}

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `conformance-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder' });
  tenantA = await credentialsOf(env.tenantKubeconfigPaths['tenant-a']);
});

afterAll(async () => {
  await env.stop();
});

afterEach(() => {
  for (const watch of openWatches) watch.close();
  openWatches.clear();
});

// ---- clients -----------------------------------------------------------

function openRequest(method: string, apiPath: string, headers: Record<string, string>): ClientRequest {
  return https.request(new URL(apiPath, env.controlPlane.server), {
    method,
    headers,
    ca: tenantA.ca,
    cert: tenantA.cert,
    key: tenantA.key,
    agent: false,
  });
}

function recordResponse(method: string, apiPath: string, res: IncomingMessage): void {
  record(`${method} ${apiPath} headers`, `${res.statusCode ?? 0} ${JSON.stringify(res.headers)}`);
}

/** One request to kube-apiserver as tenant-a. */
function api(method: string, apiPath: string, options: { body?: unknown; contentType?: string; accept?: string } = {}): Promise<ApiResponse> {
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = openRequest(method, apiPath, {
      Accept: options.accept ?? 'application/json',
      ...(payload === undefined ? {} : { 'Content-Type': options.contentType ?? 'application/json' }),
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${apiPath} timed out`)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        recordResponse(method, apiPath, res);
        record(`${method} ${apiPath} body`, body);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function expectStatus(response: ApiResponse, status: number): unknown {
  expect(response.status, response.body).toBe(status);
  return JSON.parse(response.body) as unknown;
}

const openWatches = new Set<WatchStream>();

/** A streaming watch through the aggregator: newline-delimited JSON events, read with timeouts. */
class WatchStream {
  readonly events: WatchEvent[] = [];
  /** The whole body when the request was refused (status ≠ 200). */
  body = '';
  ended = false;
  #cursor = 0;
  #buffer = '';
  #wake: (() => void) | undefined;

  private constructor(
    readonly path: string,
    private readonly req: ClientRequest,
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
  ) {}

  /** Resolves once the response headers arrived (kube flushes them when the watch is established). */
  static open(apiPath: string, accept = 'application/json'): Promise<WatchStream> {
    return new Promise((resolve, reject) => {
      const req = openRequest('GET', apiPath, { Accept: accept });
      const timer = setTimeout(() => req.destroy(new Error(`no response headers for watch ${apiPath}`)), 15_000);
      let stream: WatchStream | undefined;
      req.on('error', (error) => {
        clearTimeout(timer);
        if (stream === undefined) reject(error);
        else stream.finish();
      });
      req.on('response', (res) => {
        clearTimeout(timer);
        recordResponse('WATCH', apiPath, res);
        const opened = new WatchStream(apiPath, req, res.statusCode ?? 0, res.headers);
        stream = opened;
        openWatches.add(opened);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          opened.receive(chunk);
        });
        res.on('end', () => {
          opened.finish();
        });
        res.on('error', () => {
          opened.finish();
        });
        res.on('close', () => {
          opened.finish();
        });
        resolve(opened);
      });
      req.end();
    });
  }

  private receive(chunk: string): void {
    if (this.status !== 200) {
      this.body += chunk;
      return;
    }
    this.#buffer += chunk;
    let newline = this.#buffer.indexOf('\n');
    while (newline >= 0) {
      const line = this.#buffer.slice(0, newline).trim();
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line !== '') {
        record(`WATCH ${this.path} event`, line);
        this.events.push(JSON.parse(line) as WatchEvent);
      }
      newline = this.#buffer.indexOf('\n');
    }
    this.#wake?.();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.status !== 200) record(`WATCH ${this.path} body`, this.body);
    this.#wake?.();
  }

  /** Sleeps until something arrives, the stream ends or `ms` pass. */
  private async waitForActivity(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  /** The next event; throws if none arrives within `timeoutMs` or the stream ends. */
  async next(timeoutMs = 15_000): Promise<WatchEvent> {
    const deadline = Date.now() + timeoutMs;
    while (this.#cursor >= this.events.length) {
      const remaining = deadline - Date.now();
      if (this.ended || remaining <= 0) {
        const seen = this.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`).join(', ');
        throw new Error(`${this.ended ? 'watch ended' : `no event within ${timeoutMs} ms`} on ${this.path}; events so far: [${seen}]`);
      }
      await this.waitForActivity(remaining);
    }
    const event = this.events[this.#cursor]!;
    this.#cursor += 1;
    return event;
  }

  /** The next event that is not a periodic BOOKMARK. */
  async nextNonBookmark(timeoutMs = 15_000): Promise<WatchEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (event.type !== 'BOOKMARK') return event;
    }
  }

  /** Waits `ms` and returns what arrived meanwhile (consumed). */
  async drain(ms: number): Promise<WatchEvent[]> {
    const deadline = Date.now() + ms;
    while (!this.ended && Date.now() < deadline) await this.waitForActivity(deadline - Date.now());
    const rest = this.events.slice(this.#cursor);
    this.#cursor = this.events.length;
    return rest;
  }

  async waitForEnd(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.ended && Date.now() < deadline) await this.waitForActivity(deadline - Date.now());
    return this.ended;
  }

  close(): void {
    this.req.destroy();
  }
}

// ---- objects -----------------------------------------------------------

function unique(prefix: string): string {
  return `${prefix}-${run}-${randomBytes(2).toString('hex')}`;
}

function claim(name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'tenancy.metal3.io/v1alpha1',
    kind: 'HostClaim',
    metadata: { name, labels },
    spec: {
      poweredOn: true,
      image: { url: 'http://images.example/ubuntu.qcow2', checksum: 'http://images.example/ubuntu.qcow2.sha256' },
      ...spec,
    },
  };
}

async function create(object: KubeObject): Promise<KubeObject> {
  return expectStatus(await api('POST', COLLECTION, { body: object }), 201) as KubeObject;
}

async function mergePatch(name: string, patch: unknown): Promise<KubeObject> {
  return expectStatus(await api('PATCH', `${COLLECTION}/${name}`, { body: patch, contentType: 'application/merge-patch+json' }), 200) as KubeObject;
}

async function remove(name: string): Promise<void> {
  const res = await api('DELETE', `${COLLECTION}/${name}`);
  expect(res.status, res.body).toBe(200);
}

async function list(query = ''): Promise<KubeList> {
  return expectStatus(await api('GET', `${COLLECTION}${query}`), 200) as KubeList;
}

function rv(object: KubeObject): string {
  const value = object.metadata?.resourceVersion;
  if (value === undefined || value === '') throw new Error(`no resourceVersion in ${JSON.stringify(object)}`);
  return value;
}

function nameOf(object: KubeObject | null | undefined): string {
  return object?.metadata?.name ?? '';
}

function summary(event: WatchEvent): string {
  return `${event.type} ${nameOf(event.object)}`;
}

async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next]!;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function warningsOf(res: ApiResponse): string[] {
  const header = res.headers.warning;
  if (header === undefined) return [];
  return Array.isArray(header) ? header : [header];
}

// ---- watch.go ----------------------------------------------------------

describe('watch (upstream test/e2e/apimachinery/watch.go)', () => {
  // "should be able to start watching from a specific resource version" and
  // "should be able to restart watching from the last resource version observed by the previous watch".
  it('resumes from a resourceVersion with exactly the later changes, in order, and again from the last one seen', async () => {
    const name = unique('resume');
    const created = await create(claim(name));
    const first = await mergePatch(name, { spec: { failureDomain: 'rack-1' } });
    const second = await mergePatch(name, { spec: { failureDomain: 'rack-2' } });

    const byName = `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
    const watch = await WatchStream.open(`${COLLECTION}?watch=1&resourceVersion=${rv(created)}&${byName}`);
    expect(watch.status).toBe(200);
    const events = [await watch.next(), await watch.next()];
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED']);
    expect(events.map((e) => e.object.spec?.['failureDomain'])).toEqual(['rack-1', 'rack-2']);
    expect(events.map((e) => rv(e.object))).toEqual([rv(first), rv(second)]);
    expect(events.every((e) => e.object.kind === 'HostClaim' && e.object.apiVersion === 'tenancy.metal3.io/v1alpha1')).toBe(true);
    expect((await watch.drain(1500)).map(summary)).toEqual([]);
    watch.close();

    // Changes made while no watch is open are replayed from the last resourceVersion observed.
    const third = await mergePatch(name, { spec: { failureDomain: 'rack-3' } });
    await remove(name);
    const resumed = await WatchStream.open(`${COLLECTION}?watch=1&resourceVersion=${rv(second)}&${byName}`);
    const later = [await resumed.next(), await resumed.next()];
    expect(later.map(summary)).toEqual([`MODIFIED ${name}`, `DELETED ${name}`]);
    expect(rv(later[0]!.object)).toBe(rv(third));
    expect((await resumed.drain(1000)).map(summary)).toEqual([]);
  });

  // "should observe an object deletion if it stops meeting the requirements of the selector".
  it('turns selector transitions into ADDED/DELETED and hides changes while the object does not match', async () => {
    const name = unique('selector');
    const watch = await WatchStream.open(`${COLLECTION}?watch=1&labelSelector=${encodeURIComponent('watch-this=true')}`);
    expect(watch.status).toBe(200);

    await create(claim(name, { 'watch-this': 'true' }));
    expect(summary(await watch.next())).toBe(`ADDED ${name}`);

    const modified = await mergePatch(name, { spec: { failureDomain: 'rack-1' } });
    const modifiedEvent = await watch.next();
    expect(summary(modifiedEvent)).toBe(`MODIFIED ${name}`);
    expect(rv(modifiedEvent.object)).toBe(rv(modified));

    const unlabelled = await mergePatch(name, { metadata: { labels: { 'watch-this': null } } });
    const leaving = await watch.next();
    expect(summary(leaving)).toBe(`DELETED ${name}`);
    // kube's cacher: the previous object's content at the event's resourceVersion.
    expect(rv(leaving.object)).toBe(rv(unlabelled));

    await mergePatch(name, { spec: { failureDomain: 'rack-2' } });
    expect((await watch.drain(1500)).map(summary)).toEqual([]);

    await mergePatch(name, { metadata: { labels: { 'watch-this': 'true' } } });
    const back = await watch.next();
    expect(summary(back)).toBe(`ADDED ${name}`);
    expect(back.object.spec?.['failureDomain']).toBe('rack-2');

    await remove(name);
    expect(summary(await watch.next())).toBe(`DELETED ${name}`);
    expect((await watch.drain(1000)).map(summary)).toEqual([]);
  });

  // A resourceVersion older than the watch window: 410 Expired (errors.NewResourceExpired, watch_cache.go).
  it('answers a watch from a resourceVersion older than its window with 410 Expired', async () => {
    for (const i of [0, 1, 2]) await create(claim(unique(`old-${i}`)));
    const current = BigInt(rv(await list()));
    // The window starts at the server's first list of its records, long after resourceVersion 1.
    expect(current).toBeGreaterThan(1n);

    const watch = await WatchStream.open(`${COLLECTION}?watch=1&resourceVersion=1`);
    let status: Status;
    if (watch.status === 200) {
      const event = await watch.next();
      expect(event.type).toBe('ERROR');
      status = event.object;
      // kube ends the stream after the ERROR event; clients then relist.
      expect(await watch.waitForEnd(10_000)).toBe(true);
    } else {
      expect(await watch.waitForEnd(10_000)).toBe(true);
      expect(watch.status).toBe(410);
      status = JSON.parse(watch.body) as Status;
    }
    expect(status).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
    const oldest = /^too old resource version: 1 \((\d+)\)$/.exec(status.message ?? '');
    expect(oldest, status.message).not.toBeNull();
    const windowStart = BigInt(oldest![1]!);
    expect(windowStart).toBeGreaterThan(1n);
    expect(windowStart).toBeLessThanOrEqual(current);
  });
});

// ---- watchlist.go ------------------------------------------------------

describe('WatchList (upstream test/e2e/apimachinery/watchlist.go)', () => {
  const watchList = 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=120';

  async function initialEvents(watch: WatchStream): Promise<{ added: WatchEvent[]; bookmark: WatchEvent }> {
    const added: WatchEvent[] = [];
    for (;;) {
      const event = await watch.next();
      if (event.type === 'BOOKMARK') return { added, bookmark: event };
      expect(event.type, summary(event)).toBe('ADDED');
      added.push(event);
    }
  }

  it('streams ADDED for every existing object, then the initial-events-end BOOKMARK, then live events', async () => {
    const label = `watchlist-${run}`;
    const names = [0, 1, 2].map((i) => unique(`wl-${i}`));
    for (const name of names) await create(claim(name, { watchlist: label }));

    const selected = await WatchStream.open(`${COLLECTION}?${watchList}&labelSelector=${encodeURIComponent(`watchlist=${label}`)}`);
    expect(selected.status).toBe(200);
    const { added, bookmark } = await initialEvents(selected);
    expect(added.map((e) => nameOf(e.object)).sort()).toEqual([...names].sort());
    expect(bookmark.object).toMatchObject({
      kind: 'HostClaim',
      apiVersion: 'tenancy.metal3.io/v1alpha1',
      metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
    const bookmarkRv = BigInt(rv(bookmark.object));
    for (const event of added) expect(BigInt(rv(event.object))).toBeLessThanOrEqual(bookmarkRv);

    const live = unique('wl-live');
    const liveObject = await create(claim(live, { watchlist: label }));
    const liveEvent = await selected.nextNonBookmark();
    expect(summary(liveEvent)).toBe(`ADDED ${live}`);
    expect(rv(liveEvent.object)).toBe(rv(liveObject));
    await mergePatch(names[0]!, { spec: { failureDomain: 'rack-9' } });
    expect(summary(await selected.nextNonBookmark())).toBe(`MODIFIED ${names[0]!}`);
    selected.close();

    // Unselected: the initial events are exactly what a consistent list holds.
    const expected = (await list()).items.map((o) => nameOf(o)).sort();
    const all = await WatchStream.open(`${COLLECTION}?${watchList}`);
    const initial = await initialEvents(all);
    expect(initial.added.map((e) => nameOf(e.object)).sort()).toEqual(expected);
    expect(initial.bookmark.object.metadata?.annotations?.['k8s.io/initial-events-end']).toBe('true');
  });

  // apimachinery validation.go validateWatchOptions, as kube-apiserver answers it (422 Invalid).
  it('refuses sendInitialEvents without resourceVersionMatch=NotOlderThan', async () => {
    const res = await api('GET', `${COLLECTION}?watch=1&sendInitialEvents=true`);
    expect(res.status, res.body).toBe(422);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', code: 422, reason: 'Invalid' });
    expect(res.body).toContain('sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  });
});

// ---- chunking.go -------------------------------------------------------

describe('chunked lists (upstream test/e2e/apimachinery/chunking.go)', () => {
  const total = 150;
  const pageSize = 40;

  beforeAll(async () => {
    const names = Array.from({ length: total }, (_, i) => `chunk-${run}-${String(i).padStart(4, '0')}`);
    await inParallel(names, 8, async (name) => {
      const res = await api('POST', COLLECTION, { body: claim(name, { chunk: run }) });
      if (res.status !== 201) throw new Error(`creating ${name}: ${res.status} ${res.body}`);
    });
  }, 300_000);

  // "should return chunks of results for list calls".
  it('returns every object exactly once in pages of at most `limit`, at one resourceVersion', async () => {
    const everything = (await list()).items.map((o) => nameOf(o));
    expect(everything.filter((n) => n.startsWith(`chunk-${run}-`))).toHaveLength(total);

    const seen: string[] = [];
    const versions = new Set<string>();
    let token: string | undefined;
    let pages = 0;
    do {
      const query = `?limit=${pageSize}${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`;
      const page = await list(query);
      pages += 1;
      expect(page.kind).toBe('HostClaimList');
      expect(page.items.length).toBeLessThanOrEqual(pageSize);
      versions.add(rv(page));
      token = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
      const remaining = page.metadata?.remainingItemCount;
      if (token === undefined) {
        expect(remaining ?? 0).toBe(0);
      } else {
        expect(page.items).toHaveLength(pageSize);
        if (remaining !== undefined) expect(remaining + page.items.length + seen.length).toBe(everything.length);
      }
      seen.push(...page.items.map((o) => nameOf(o)));
    } while (token !== undefined);

    expect(pages).toBe(Math.ceil(everything.length / pageSize));
    expect(versions.size).toBe(1);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(everything);
    // etcd key order: by name within the namespace.
    expect(seen).toEqual([...seen].sort());
  });

  it('pages within a label selector too, and refuses an invalid continue token with a 400 Status', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await list(`?labelSelector=${encodeURIComponent(`chunk=${run}`)}&limit=${pageSize}${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`);
      expect(page.items.length).toBeLessThanOrEqual(pageSize);
      seen.push(...page.items.map((o) => nameOf(o)));
      token = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
    } while (token !== undefined);
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => `chunk-${run}-${String(i).padStart(4, '0')}`));

    const invalid = await api('GET', `${COLLECTION}?limit=${pageSize}&continue=not-a-continue-token`);
    expect(invalid.status, invalid.body).toBe(400);
    expect(JSON.parse(invalid.body)).toMatchObject({ kind: 'Status', status: 'Failure', code: 400, reason: 'BadRequest' });
  });

  // table_conversion.go "should return chunks of table results for list calls".
  it('returns chunks of Table results', async () => {
    const selector = `labelSelector=${encodeURIComponent(`chunk=${run}`)}`;
    const first = expectStatus(await api('GET', `${COLLECTION}?${selector}&limit=2`, { accept: TABLE_ACCEPT }), 200) as Table;
    expect(first.kind).toBe('Table');
    expect(first.rows).toHaveLength(2);
    const token = first.metadata?.continue;
    expect(token).toBeTruthy();
    const second = expectStatus(await api('GET', `${COLLECTION}?${selector}&limit=2&continue=${encodeURIComponent(token ?? '')}`, { accept: TABLE_ACCEPT }), 200) as Table;
    expect(second.rows).toHaveLength(2);
    expect(second.metadata?.continue).toBeTruthy();
    expect(second.rows.map((r) => nameOf(r.object))).toEqual([`chunk-${run}-0002`, `chunk-${run}-0003`]);
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });
});

// ---- table_conversion.go -----------------------------------------------

describe('Table output (upstream test/e2e/apimachinery/table_conversion.go)', () => {
  const label = `table-${run}`;
  const selector = `labelSelector=${encodeURIComponent(`table=${label}`)}`;
  const names = [unique('table-0'), unique('table-1')];

  beforeAll(async () => {
    for (const name of names) await create(claim(name, { table: label }, { failureDomain: 'rack-t' }));
  });

  function expectColumns(table: Table): TableColumnDefinition[] {
    const columns = table.columnDefinitions ?? [];
    expect(columns[0]).toMatchObject({ name: 'Name', type: 'string', format: 'name' });
    expect(columns.at(-1)?.name).toBe('Age');
    return columns;
  }

  it('lists and gets as a Table whose rows carry PartialObjectMetadata', async () => {
    const table = expectStatus(await api('GET', `${COLLECTION}?${selector}`, { accept: TABLE_ACCEPT }), 200) as Table;
    expect(table).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    const columns = expectColumns(table);
    expect(table.rows.map((r) => r.cells[0])).toEqual([...names].sort());
    for (const row of table.rows) {
      expect(row.cells).toHaveLength(columns.length);
      expect(row.object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { namespace: NAMESPACE } });
      expect(row.object?.['spec']).toBeUndefined();
      expect(row.cells.at(-1)).toMatch(/^\d+[smhdy]/);
    }

    const one = expectStatus(await api('GET', `${COLLECTION}/${names[0]!}`, { accept: TABLE_ACCEPT }), 200) as Table;
    expect(one.kind).toBe('Table');
    expectColumns(one);
    expect(one.rows).toHaveLength(1);
    expect(one.rows[0]!.cells[0]).toBe(names[0]);
    expect(one.rows[0]!.object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: names[0] } });
  });

  it('embeds full objects with includeObject=Object and refuses an unknown includeObject', async () => {
    const table = expectStatus(await api('GET', `${COLLECTION}?${selector}&includeObject=Object`, { accept: TABLE_ACCEPT }), 200) as Table;
    expect(table.rows).toHaveLength(names.length);
    for (const row of table.rows) {
      expect(row.object).toMatchObject({ kind: 'HostClaim', apiVersion: 'tenancy.metal3.io/v1alpha1', spec: { failureDomain: 'rack-t' } });
    }
    const bogus = await api('GET', `${COLLECTION}?${selector}&includeObject=Everything`, { accept: TABLE_ACCEPT });
    expect(bogus.status, bogus.body).toBe(400);
    expect(JSON.parse(bogus.body)).toMatchObject({ kind: 'Status', code: 400 });
  });

  it('sends columnDefinitions only with the first Table of a watch', async () => {
    const watch = await WatchStream.open(`${COLLECTION}?watch=1&${selector}`, TABLE_ACCEPT);
    expect(watch.status).toBe(200);
    const initial = [await watch.next(), await watch.next()];
    await mergePatch(names[0]!, { spec: { failureDomain: 'rack-u' } });
    const modified = await watch.next();
    expect([...initial, modified].map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'MODIFIED']);
    const tables = [...initial, modified].map((e) => e.object as Table);
    for (const table of tables) {
      expect(table).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      expect(table.rows).toHaveLength(1);
    }
    expectColumns(tables[0]!);
    for (const table of tables.slice(1)) expect(table.columnDefinitions ?? []).toEqual([]);
    expect(tables.map((t) => t.rows[0]!.cells[0]).slice(0, 2).sort()).toEqual([...names].sort());
    expect(tables[2]!.rows[0]!.cells.length).toBe(tables[0]!.columnDefinitions!.length);
  });

  it('shows the IMAGE column with kubectl get -o wide', async () => {
    const result = await env.controlPlane.kubectl(['-n', NAMESPACE, 'get', 'hc', '-l', `table=${label}`, '-o', 'wide'], {
      kubeconfig: env.tenantKubeconfigPaths['tenant-a'],
    });
    record('kubectl get hc -o wide', `${result.stdout}\n${result.stderr}`);
    expect(result.code, result.stderr).toBe(0);
    const [header, ...rows] = result.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+HOST\s+READY\s+POWERED\s+IMAGE\s+FAILURE DOMAIN\s+HOST ERROR\s+AGE$/);
    expect(rows).toHaveLength(names.length);
    expect(rows.every((r) => r.includes('http://images.example/ubuntu.qcow2'))).toBe(true);
  });
});

// ---- field_validation.go -----------------------------------------------

describe('field validation and dry run (upstream test/e2e/apimachinery/field_validation.go)', () => {
  function withBogus(name: string): KubeObject {
    const object = claim(name);
    return { ...object, spec: { ...object.spec, bogus: 'surprise' } };
  }

  it('Strict: 400 naming the unknown field in HostClaim terms', async () => {
    const name = unique('strict');
    const res = await api('POST', `${COLLECTION}?fieldValidation=Strict`, { body: withBogus(name) });
    expect(res.status, res.body).toBe(400);
    const status = JSON.parse(res.body) as Status;
    expect(status).toMatchObject({ kind: 'Status', status: 'Failure', code: 400, reason: 'BadRequest' });
    // kube-apiserver's wording for a custom resource (crdhandler + transformDecodeError).
    expect(status.message).toBe('HostClaim in version "v1alpha1" cannot be handled as a HostClaim: strict decoding error: unknown field "spec.bogus"');
    for (const internal of INTERNAL_NAMES) expect(status.message).not.toContain(internal);
    expect((await api('GET', `${COLLECTION}/${name}`)).status).toBe(404);
  });

  it('Strict: 400 for a duplicate field in the JSON body', async () => {
    const name = unique('duplicate');
    const body = `{"apiVersion":"tenancy.metal3.io/v1alpha1","kind":"HostClaim","metadata":{"name":"${name}"},"spec":{"poweredOn":true,"poweredOn":false}}`;
    const res = await api('POST', `${COLLECTION}?fieldValidation=Strict`, { body });
    expect(res.status, res.body).toBe(400);
    const status = JSON.parse(res.body) as Status;
    expect(status).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    // What kube-apiserver answers for a custom resource with the same body.
    expect(status.message).toBe('HostClaim in version "v1alpha1" cannot be handled as a HostClaim: strict decoding error: duplicate field "spec.poweredOn"');
    expect((await api('GET', `${COLLECTION}/${name}`)).status).toBe(404);
  });

  it('Warn (and the default): 201 with a Warning header naming the field, which is dropped', async () => {
    for (const query of ['?fieldValidation=Warn', '']) {
      const name = unique('warn');
      const res = await api('POST', `${COLLECTION}${query}`, { body: withBogus(name) });
      expect(res.status, res.body).toBe(201);
      const warnings = warningsOf(res);
      expect(warnings.some((w) => /^299 - ".*unknown field \\"spec\.bogus\\"/.test(w)), JSON.stringify(warnings)).toBe(true);
      const stored = expectStatus(await api('GET', `${COLLECTION}/${name}`), 200) as KubeObject;
      expect(stored.spec?.['bogus']).toBeUndefined();
    }
  });

  it('Warn: 201 with a Warning header for a duplicate field', async () => {
    const name = unique('dup-warn');
    const body = `{"apiVersion":"tenancy.metal3.io/v1alpha1","kind":"HostClaim","metadata":{"name":"${name}"},"spec":{"poweredOn":true,"poweredOn":false}}`;
    const res = await api('POST', `${COLLECTION}?fieldValidation=Warn`, { body });
    expect(res.status, res.body).toBe(201);
    expect(warningsOf(res).some((w) => w.includes('duplicate field \\"spec.poweredOn\\"')), JSON.stringify(warningsOf(res))).toBe(true);
  });

  it('Ignore: 201, no warning, the field dropped', async () => {
    const name = unique('ignore');
    const res = await api('POST', `${COLLECTION}?fieldValidation=Ignore`, { body: withBogus(name) });
    expect(res.status, res.body).toBe(201);
    expect(warningsOf(res)).toEqual([]);
    expect((JSON.parse(res.body) as KubeObject).spec?.['bogus']).toBeUndefined();
    const stored = expectStatus(await api('GET', `${COLLECTION}/${name}`), 200) as KubeObject;
    expect(stored.spec?.['bogus']).toBeUndefined();
  });

  it('dryRun=All: 201 with the object, but nothing is stored and no watcher hears of it', async () => {
    const name = unique('dry');
    const watch = await WatchStream.open(`${COLLECTION}?watch=1&resourceVersion=${rv(await list())}`);
    const res = await api('POST', `${COLLECTION}?dryRun=All`, { body: claim(name) });
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'HostClaim', metadata: { name, namespace: NAMESPACE }, spec: { poweredOn: true } });
    const after = await api('GET', `${COLLECTION}/${name}`);
    expect(after.status, after.body).toBe(404);
    expect(JSON.parse(after.body)).toMatchObject({
      kind: 'Status',
      code: 404,
      reason: 'NotFound',
      message: `hostclaims.tenancy.metal3.io "${name}" not found`,
    });
    expect((await watch.drain(1500)).map(summary)).toEqual([]);
  });
});

// ---- everything above ----------------------------------------------------

describe('no leak of the backing storage', () => {
  it('never names HostClaimRecord, infra.tenancy.metal3.io or hostclaim-system in any response seen above', () => {
    expect(transcript.length).toBeGreaterThan(0);
    const leaks = transcript.flatMap(({ what, text }) =>
      INTERNAL_NAMES.filter((internal) => text.includes(internal)).map((internal) => `${what}: ${internal} in ${text.slice(0, 400)}`),
    );
    expect(leaks).toEqual([]);
  });
});
