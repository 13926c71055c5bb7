/**
 * Restarting the server process loses nothing, and clients' watches resume or
 * relist cleanly: once after a graceful stop (SIGTERM) and once after an
 * abrupt one (SIGKILL). Everything goes through the real aggregator as
 * tenant-a, with a raw watch and a client-node informer.
 *
 * The server keeps nothing but derived state in memory: its watch cache is
 * rebuilt from one list of the records, and its window starts at that
 * list's resourceVersion, exactly like kube-apiserver's watch cache after a
 * restart (watchCache.getAllEventsSinceLocked). So a watch resumed from a
 * resourceVersion seen before the restart is
 *  - older than the window if anything was written to etcd in between (in a
 *    real cluster, always; the test writes a ConfigMap while the server is
 *    down to make it certain): HTTP 200 and one ERROR event carrying 410
 *    Expired `too old resource version: X (Y)` (cacher.Watch's errWatcher),
 *    after which clients relist and watch from the list's resourceVersion;
 *  - served without a gap if it is not older than the window: checked at the
 *    boundary, with a watch from exactly Y.
 * Either way every change after the restart must arrive, in order, once.
 *
 * A restart writes the backing CRD only when it must: never when it holds
 * this server's schema, never over a newer schema generation, always over an
 * older one (backing/crd.ts).
 */
import fs from 'node:fs/promises';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi, KubeConfig, makeInformer, type Informer, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ExitStatus } from '../controlplane/processes.js';
import { auditedSoFar } from '../controlplane/audit.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';
import { loadSchemaSource } from '../../src/api/openapi/schema-source.js';
import { canonicalJson, SCHEMA_GENERATION_ANNOTATION } from '../../src/backing/crd.js';
import { hostClaimRecordCRD, hostClaimRecordSchemaGeneration } from '../../src/resources/hostclaim/storage.js';

const binDir = inject('controlPlaneBinDir');
const NAMESPACE = 'tenant-a';
const GROUP = 'tenancy.metal3.io';
const VERSION = 'v1alpha1';
const COLLECTION = `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/hostclaims`;
const SCENARIO_TIMEOUT_MS = 300_000;
const WAIT_MS = 60_000;

let env: DevEnvironment;
let config: KubeConfig;

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `restart-${process.pid}`), serverEntry: 'dist/src/main.js', binDir });
  config = new KubeConfig();
  config.loadFromFile(env.tenantKubeconfigPaths['tenant-a']);
});

afterAll(async () => {
  await env.stop();
});

// ---- objects ------------------------------------------------------------

interface Meta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
}

interface HostClaim {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  spec: Record<string, unknown>;
}

interface HostClaimList {
  metadata: { resourceVersion: string };
  items: HostClaim[];
}

interface Status {
  kind?: string;
  status?: string;
  code?: number;
  reason?: string;
  message?: string;
}

type RawEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: HostClaim } | { type: 'ERROR'; object: Status };

function claim(name: string, index: number): object {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'HostClaim',
    metadata: { name, labels: { app: 'restart' } },
    spec: {
      poweredOn: index % 2 === 0,
      image: { url: `http://images.example/${name}.qcow2`, checksum: `http://images.example/${name}.qcow2.sha256` },
      hostSelector: { matchLabels: { role: 'worker', slot: String(index) } },
    },
  };
}

/** name@resourceVersion, sorted: what "the same objects" means for caches and lists. */
function versions(objects: readonly { metadata?: { name?: string; resourceVersion?: string } }[], prefix: string): string[] {
  return objects
    .filter((o) => (o.metadata?.name ?? '').startsWith(prefix))
    .map((o) => `${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`)
    .sort();
}

// ---- raw HTTP as tenant-a, through the aggregator -------------------------

interface ApiResponse {
  status: number;
  body: string;
}

async function requestOptions(method: string, apiPath: string, headers: Record<string, string>): Promise<https.RequestOptions> {
  const server = config.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('tenant-a kubeconfig has no cluster');
  const url = new URL(apiPath, server);
  const options: https.RequestOptions = { method, host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers, agent: false };
  await config.applyToHTTPSOptions(options);
  return options;
}

async function call(method: string, apiPath: string, body?: unknown, contentType = 'application/json'): Promise<ApiResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const options = await requestOptions(method, apiPath, { Accept: 'application/json', ...(payload === undefined ? {} : { 'Content-Type': contentType }) });
  return new Promise((resolve, reject) => {
    const req = https.request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${apiPath} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function expectOk<T>(response: Promise<ApiResponse>, what: string): Promise<T> {
  const { status, body } = await response;
  if (status < 200 || status > 299) throw new Error(`${what}: HTTP ${status}: ${body}`);
  return JSON.parse(body) as T;
}

const create = (name: string, index: number) => expectOk<HostClaim>(call('POST', COLLECTION, claim(name, index)), `create ${name}`);
const get = (name: string) => expectOk<HostClaim>(call('GET', `${COLLECTION}/${name}`), `get ${name}`);
const list = () => expectOk<HostClaimList>(call('GET', COLLECTION), 'list');
const label = (name: string, value: string) =>
  expectOk<HostClaim>(call('PATCH', `${COLLECTION}/${name}`, { metadata: { labels: { step: value } } }, 'application/merge-patch+json'), `label ${name}`);
const remove = (name: string) => expectOk<unknown>(call('DELETE', `${COLLECTION}/${name}`), `delete ${name}`);

/** A watch stream, every event recorded; `outcome` tells how it ended. */
class RawWatch {
  readonly events: RawEvent[] = [];
  /** 'complete': the chunked body ended properly; 'cut': the connection dropped mid-stream. */
  outcome: 'complete' | 'cut' | undefined;
  body = '';
  #buffer = '';

  private constructor(
    readonly status: number,
    private readonly req: ClientRequest,
  ) {}

  static async open(query: Record<string, string>): Promise<RawWatch> {
    const search = new URLSearchParams({ watch: '1', timeoutSeconds: '900', ...query });
    const options = await requestOptions('GET', `${COLLECTION}?${search.toString()}`, { Accept: 'application/json' });
    return new Promise((resolve, reject) => {
      const req = https.request(options);
      const timer = setTimeout(() => req.destroy(new Error('no response headers for the watch')), 15_000);
      let opened: RawWatch | undefined;
      req.on('error', (error) => {
        clearTimeout(timer);
        if (opened === undefined) reject(error);
        else opened.outcome ??= 'cut';
      });
      req.on('response', (res) => {
        clearTimeout(timer);
        const watch = new RawWatch(res.statusCode ?? 0, req);
        opened = watch;
        openWatches.add(watch);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          watch.receive(chunk);
        });
        res.on('error', () => undefined);
        res.on('close', () => {
          watch.outcome ??= res.complete ? 'complete' : 'cut';
        });
        resolve(watch);
      });
      req.end();
    });
  }

  get ended(): boolean {
    return this.outcome !== undefined;
  }

  /** Object events (no bookmarks) on claims named prefix*, as "TYPE name@rv". */
  changes(prefix: string): string[] {
    return this.events.flatMap((e) =>
      e.type === 'ERROR' || e.type === 'BOOKMARK' || !e.object.metadata.name.startsWith(prefix) ? [] : [`${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`],
    );
  }

  /** The resourceVersion a client resumes from: the last object event's or bookmark's. */
  lastResourceVersion(fallback: string): string {
    let rv = fallback;
    for (const e of this.events) if (e.type !== 'ERROR') rv = e.object.metadata.resourceVersion;
    return rv;
  }

  close(): void {
    this.req.destroy();
  }

  private receive(chunk: string): void {
    if (this.status !== 200) {
      this.body += chunk;
      return;
    }
    this.#buffer += chunk;
    for (let newline = this.#buffer.indexOf('\n'); newline >= 0; newline = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, newline).trim();
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line !== '') this.events.push(JSON.parse(line) as RawEvent);
    }
  }
}

const openWatches = new Set<RawWatch>();
afterEach(() => {
  for (const watch of openWatches) watch.close();
  openWatches.clear();
});

// ---- a client-node informer that keeps going -------------------------------

interface InformerRecord {
  informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
  adds: string[];
  updates: string[];
  deletes: string[];
  /** Errors the informer reported (each one stopped it; it was restarted like client-node's docs show). */
  errors: { statusCode: number | undefined; message: string }[];
  stop(): Promise<void>;
}

async function startInformer(): Promise<InformerRecord> {
  const api = config.makeApiClient(CustomObjectsApi);
  const listFn = () => api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: 'hostclaims' }) as Promise<{ items: KubernetesObject[] }>;
  const informer = makeInformer<KubernetesObject>(config, COLLECTION, listFn);
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const name = (o: KubernetesObject): string => o.metadata?.name ?? '';
  const record: InformerRecord = {
    informer,
    adds: [],
    updates: [],
    deletes: [],
    errors: [],
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await informer.stop();
    },
  };
  informer.on('add', (o) => record.adds.push(name(o)));
  informer.on('update', (o) => record.updates.push(name(o)));
  informer.on('delete', (o) => record.deletes.push(name(o)));
  const restart = (): void => {
    if (stopped) return;
    informer.start().catch((error: unknown) => {
      onError(error);
    });
  };
  const onError = (error: unknown): void => {
    const { statusCode, code, message } = (error ?? {}) as { statusCode?: number; code?: number; message?: string };
    record.errors.push({ statusCode: statusCode ?? code, message: message ?? String(error) });
    if (stopped) return;
    clearTimeout(retry);
    retry = setTimeout(restart, 500);
  };
  informer.on('error', onError);
  await informer.start();
  return record;
}

/** The informer's cache (names and resourceVersions) equals a fresh consistent list. */
async function waitForInformer(record: InformerRecord, prefix: string, what: string): Promise<string[]> {
  let last = '';
  return pollUntil(
    `the informer cache to match a fresh list (${what})`,
    async () => {
      const server = versions((await list()).items, prefix);
      const cached = versions(record.informer.list(NAMESPACE), prefix);
      last = `server: ${JSON.stringify(server)}\ncache:  ${JSON.stringify(cached)}\nerrors: ${JSON.stringify(record.errors)}`;
      return JSON.stringify(server) === JSON.stringify(cached) ? server : undefined;
    },
    { timeoutMs: WAIT_MS, intervalMs: 250, describeFailure: () => last },
  );
}

/** "DELETED name@rv" → "DELETED name" (DELETE answers a Status, so a deletion's resourceVersion is known from the watch only). */
function withoutDeletedVersions(changes: string[]): string[] {
  return changes.map((c) => (c.startsWith('DELETED ') ? c.slice(0, c.indexOf('@')) : c));
}

/**
 * The watch's changes that are the test's own writes, once all of them have
 * arrived. Other writers (the binder writes claims' status) may interleave;
 * the test's writes must all be there, in order, each exactly once.
 */
async function waitForWrites(watch: RawWatch, prefix: string, expected: readonly string[], what: string): Promise<string[]> {
  const ours = (): string[] => withoutDeletedVersions(watch.changes(prefix)).filter((c) => expected.includes(c));
  await pollUntil(`${expected.length} writes on the watch (${what})`, () => Promise.resolve(ours().length >= expected.length || watch.ended ? true : undefined), {
    timeoutMs: WAIT_MS,
    intervalMs: 100,
    describeFailure: () => `expected: ${JSON.stringify(expected)}
changes: ${JSON.stringify(watch.changes(prefix))}; outcome: ${watch.outcome ?? 'open'}`,
  });
  return ours();
}

/** resourceVersions of the watch's changes on prefix* claims, in delivery order. */
function changeVersions(watch: RawWatch, prefix: string): bigint[] {
  return watch.changes(prefix).map((c) => BigInt(c.slice(c.indexOf('@') + 1)));
}

/**
 * Waits until `base` (a list at baseRv) with the watch's later changes folded
 * in equals a fresh consistent list: the watch has no gap.
 */
async function waitForFold(watch: RawWatch, prefix: string, base: HostClaimList, what: string): Promise<string[]> {
  let last = '';
  return pollUntil(
    `the watch (${what}) folded onto the list to equal a fresh list`,
    async () => {
      const fresh = versions((await list()).items, prefix);
      const state = new Map(base.items.filter((o) => o.metadata.name.startsWith(prefix)).map((o) => [o.metadata.name, o.metadata.resourceVersion]));
      for (const e of watch.events) {
        if (e.type === 'ERROR' || e.type === 'BOOKMARK' || !e.object.metadata.name.startsWith(prefix)) continue;
        if (BigInt(e.object.metadata.resourceVersion) <= BigInt(base.metadata.resourceVersion)) continue;
        if (e.type === 'DELETED') state.delete(e.object.metadata.name);
        else state.set(e.object.metadata.name, e.object.metadata.resourceVersion);
      }
      const folded = [...state].map(([n, rv]) => `${n}@${rv}`).sort();
      last = `fresh:  ${JSON.stringify(fresh)}
folded: ${JSON.stringify(folded)}`;
      return JSON.stringify(folded) === JSON.stringify(fresh) ? fresh : undefined;
    },
    { timeoutMs: WAIT_MS, intervalMs: 250, describeFailure: () => last },
  );
}

/** Opens a watch, retrying while the aggregator cannot reach the server (503) or the server's cache is not yet synced (429). */
async function openWatchWhenServed(query: Record<string, string>): Promise<RawWatch> {
  const refusals: string[] = [];
  return pollUntil(
    'a watch answered by the restarted server',
    async () => {
      const watch = await RawWatch.open(query);
      if (watch.status === 200) return watch;
      await pollUntil('the refused watch to end', () => Promise.resolve(watch.ended ? true : undefined), { timeoutMs: 10_000 });
      refusals.push(`${watch.status} ${watch.body}`);
      expect([429, 503], watch.body).toContain(watch.status);
      return undefined;
    },
    { timeoutMs: WAIT_MS, intervalMs: 250, describeFailure: () => refusals.join('\n') },
  );
}

// ---- the scenario -------------------------------------------------------

async function restartScenario(kill: boolean, prefix: string): Promise<void> {
  const names = (kind: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${kind}-${i}`);
  const pre = names('pre', 5);
  const post = names('post', 2);
  const expectedBefore: string[] = [];
  const expectedAfter: string[] = [];
  const write = async (into: string[], type: 'ADDED' | 'MODIFIED', object: Promise<HostClaim>): Promise<void> => {
    const { metadata } = await object;
    into.push(`${type} ${metadata.name}@${metadata.resourceVersion}`);
  };
  const erase = async (into: string[], name: string): Promise<void> => {
    await remove(name);
    into.push(`DELETED ${name}`);
  };

  // Before the restart: five claims, an informer and a watch on them, then one label and one delete.
  for (const [i, name] of pre.entries()) await create(name, i);
  const informer = await startInformer();
  try {
    await waitForInformer(informer, prefix, 'initial sync');
    const initial = await list();
    const before = await RawWatch.open({ resourceVersion: initial.metadata.resourceVersion, allowWatchBookmarks: 'true' });
    expect(before.status).toBe(200);
    await write(expectedBefore, 'MODIFIED', label(pre[0]!, 'before'));
    await erase(expectedBefore, pre[4]!);
    expect(await waitForWrites(before, prefix, expectedBefore, 'before the restart')).toEqual(expectedBefore);
    await waitForInformer(informer, prefix, 'before the restart');
    const survivors = new Map<string, HostClaim>();
    for (const name of pre.slice(0, 4)) survivors.set(name, await get(name));
    const resumeFrom = before.lastResourceVersion(initial.metadata.resourceVersion);

    // Stop the server; the watch through the aggregator ends with it.
    const server = env.serverProcess;
    expect(server).toBeDefined();
    await env.stopServer({ kill });
    const exit: ExitStatus = await server!.exited;
    if (kill) expect(exit.signal).toBe('SIGKILL');
    // A graceful stop ends by itself, well within the harness's SIGKILL grace.
    else expect(exit).toEqual({ code: 0, signal: null });
    await pollUntil('the watch to end with the server', () => Promise.resolve(before.ended ? true : undefined), { timeoutMs: 30_000 });
    if (!kill) {
      // Graceful: the stream ends properly, without an ERROR event (kube ends
      // watches the same way on shutdown); clients re-watch from their last resourceVersion.
      expect(before.events.filter((e) => e.type === 'ERROR')).toEqual([]);
      expect(before.outcome).toBe('complete');
    }

    // While it is down, the API refuses writes: nothing can reach the records.
    const whileDown = await call('POST', COLLECTION, claim(`${prefix}-down`, 9));
    expect(whileDown.status, whileDown.body).toBe(503);
    expect((await call('GET', COLLECTION)).status).toBe(503);
    // The rest of the cluster keeps writing meanwhile (in a real cluster leases,
    // events and controllers always do; here one ConfigMap, so that the outcome
    // below does not depend on timing): etcd's revision moves past resumeFrom.
    const elsewhere = await env.controlPlane.kubectl(['-n', NAMESPACE, 'create', 'configmap', `${prefix}-written-while-down`, '-o', 'jsonpath={.metadata.resourceVersion}']);
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    const writtenWhileDown = BigInt(elsewhere.stdout);
    expect(writtenWhileDown).toBeGreaterThan(BigInt(resumeFrom));

    await env.restartServer();

    // Nothing written before the restart is lost or changed (the binder may
    // have written status meanwhile: uid, spec, labels, generation stay);
    // nothing refused while down exists.
    for (const [name, old] of survivors) {
      const now = await get(name);
      expect(now.metadata.uid, name).toBe(old.metadata.uid);
      expect(now.metadata.creationTimestamp, name).toBe(old.metadata.creationTimestamp);
      expect(now.metadata.generation, name).toBe(old.metadata.generation);
      expect(now.metadata.labels, name).toEqual(old.metadata.labels);
      expect(now.spec, name).toEqual(old.spec);
      expect(BigInt(now.metadata.resourceVersion), name).toBeGreaterThanOrEqual(BigInt(old.metadata.resourceVersion));
    }
    expect((await call('GET', `${COLLECTION}/${pre[4]!}`)).status).toBe(404);
    expect((await call('GET', `${COLLECTION}/${prefix}-down`)).status).toBe(404);

    // The raw client resumes from its last resourceVersion. The restarted
    // server's watch cache starts at its first list of the records, after the
    // ConfigMap write: like kube-apiserver's (watchCache.getAllEventsSinceLocked:
    // resourceVersion < listResourceVersion), it answers 200 + one ERROR event
    // with 410 Expired naming the window start, and ends the stream.
    const resumed = await openWatchWhenServed({ resourceVersion: resumeFrom, allowWatchBookmarks: 'true' });
    await pollUntil('the resumed watch to end after its ERROR event', () => Promise.resolve(resumed.ended ? true : undefined), {
      timeoutMs: 10_000,
      describeFailure: () => `resumed from ${resumeFrom}; events: ${JSON.stringify(resumed.events)}`,
    });
    expect(resumed.events).toHaveLength(1);
    const expired = resumed.events[0]!;
    expect(expired.type).toBe('ERROR');
    const status = expired.object as Status;
    expect(status).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
    const window = /^too old resource version: (\d+) \((\d+)\)$/.exec(status.message ?? '');
    expect(window, status.message).not.toBeNull();
    expect(window![1]).toBe(resumeFrom);
    const windowStart = window![2]!;
    expect(BigInt(windowStart)).toBeGreaterThanOrEqual(writtenWhileDown);
    expect(resumed.outcome).toBe('complete');

    // kube's boundary: a watch from exactly the window start is served (a client
    // that had seen that resourceVersion resumes without relisting)...
    const fromWindowStart = await RawWatch.open({ resourceVersion: windowStart, allowWatchBookmarks: 'true' });
    expect(fromWindowStart.status).toBe(200);
    // ...and one that got the 410 relists (consistent) and watches from the list's resourceVersion.
    const relisted = await list();
    expect(BigInt(relisted.metadata.resourceVersion)).toBeGreaterThanOrEqual(BigInt(windowStart));
    expect(relisted.items.filter((o) => o.metadata.name.startsWith(prefix)).map((o) => o.metadata.name).sort()).toEqual([...survivors.keys()].sort());
    const after = await RawWatch.open({ resourceVersion: relisted.metadata.resourceVersion, allowWatchBookmarks: 'true' });
    expect(after.status).toBe(200);

    // Changes after the restart: creates, labels (on old and new claims) and deletes.
    await write(expectedAfter, 'ADDED', create(post[0]!, 10));
    await write(expectedAfter, 'ADDED', create(post[1]!, 11));
    await write(expectedAfter, 'MODIFIED', label(pre[1]!, 'after'));
    await erase(expectedAfter, pre[2]!);
    await write(expectedAfter, 'MODIFIED', label(post[0]!, 'after'));
    await erase(expectedAfter, post[1]!);

    // Both watches deliver every write, in order, exactly once, at the
    // resourceVersion the write returned; resourceVersions only grow; and the
    // relist plus the watch's changes is exactly a fresh list: no gap.
    let fresh: string[] = [];
    for (const [watch, what] of [
      [after, 'from the relist'],
      [fromWindowStart, 'from the window start'],
    ] as const) {
      expect(await waitForWrites(watch, prefix, expectedAfter, what), what).toEqual(expectedAfter);
      expect(watch.events.filter((e) => e.type === 'ERROR'), what).toEqual([]);
      const rvs = changeVersions(watch, prefix);
      const floor = watch === after ? BigInt(relisted.metadata.resourceVersion) : BigInt(windowStart);
      expect(rvs.every((rv, i) => rv > (i === 0 ? floor : rvs[i - 1]!)), `${what}: ${rvs.join(' ')}`).toBe(true);
      fresh = await waitForFold(watch, prefix, relisted, what);
    }
    const newer = (watch: RawWatch): string[] => watch.changes(prefix).filter((c) => BigInt(c.slice(c.indexOf('@') + 1)) > BigInt(relisted.metadata.resourceVersion));
    expect(newer(fromWindowStart)).toEqual(newer(after));
    expect(fresh.map((v) => v.slice(0, v.indexOf('@')))).toEqual([pre[0]!, pre[1]!, pre[3]!, post[0]!].sort());

    // The informer converges to exactly the objects that exist...
    await waitForInformer(informer, prefix, 'after the restart');
    // ...and never lost one on the way: every object that existed before the
    // restart or survives it was added, and an object was deleted only when it
    // really was (a relist that dropped a survivor would show here). An object
    // created and erased while the informer relisted (post[1]) may be seen
    // both ways or not at all: a relist compresses history, as client-go's does;
    // the raw watches above prove no change is lost.
    const mine = (names: string[]): string[] => names.filter((n) => n.startsWith(prefix)).sort();
    const shortLived = post[1]!;
    const seenShortLived = mine(informer.adds).includes(shortLived);
    expect(mine(informer.adds).filter((n) => n !== shortLived)).toEqual([...pre, post[0]!].sort());
    expect(mine(informer.deletes)).toEqual([pre[4]!, pre[2]!, ...(seenShortLived ? [shortLived] : [])].sort());
    // Its errors were the outage (503 from the aggregator, 429 while the new
    // process synced its cache, or the connection cut by a kill), never an
    // answer from a server that was up.
    for (const error of informer.errors) {
      if (error.statusCode !== undefined) expect([429, 503], error.message).toContain(error.statusCode);
    }
  } finally {
    await informer.stop();
  }
}

describe('restarting the server process', () => {
  it(
    'loses nothing after a graceful stop (SIGTERM); watches relist after 410 Expired and then miss no change',
    async () => {
      await restartScenario(false, 'graceful');
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'loses nothing after an abrupt kill (SIGKILL); watches relist after 410 Expired and then miss no change',
    async () => {
      await restartScenario(true, 'killed');
    },
    SCENARIO_TIMEOUT_MS,
  );
});

// ---- the backing CRD across restarts ----------------------------------------

const BACKING_CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${hostClaimRecordCRD(loadSchemaSource()).metadata.name}`;

interface StoredCrd {
  metadata: { resourceVersion: string; annotations?: Record<string, string> };
  spec: Record<string, unknown> & { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] };
}

function backingCrd(): Promise<StoredCrd> {
  return env.controlPlane.requestJson<StoredCrd>('GET', BACKING_CRD_PATH);
}

/** Writes the CRD as another server would have: the given generation annotation and a changed schema description. */
async function rewriteBackingCrd(annotations: Record<string, string>, description: string): Promise<StoredCrd> {
  const crd = await backingCrd();
  const [version, ...rest] = crd.spec.versions;
  if (version === undefined) throw new Error('the backing CRD has no version');
  const schema = { ...version.schema, openAPIV3Schema: { ...version.schema.openAPIV3Schema, description } };
  return env.controlPlane.requestJson<StoredCrd>('PUT', BACKING_CRD_PATH, {
    ...crd,
    metadata: { ...crd.metadata, annotations },
    spec: { ...crd.spec, versions: [{ ...version, schema }, ...rest] },
  });
}

/** The server's writes to CRDs so far, as kube-apiserver audited them (a no-op update leaves the resourceVersion as it was). */
async function crdWritesByServer(): Promise<string[]> {
  return (await auditedSoFar(env.controlPlane.logDir))
    .filter((request) => request.resource === 'customresourcedefinitions' && !['get', 'list', 'watch'].includes(request.verb))
    .map((request) => `${request.verb} ${request.name}`);
}

async function serverLogLines(): Promise<Record<string, unknown>[]> {
  const text = await fs.readFile(env.serverLogPath, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the backing CRD across restarts (docs/operations.md, upgrade)', () => {
  const desired = hostClaimRecordCRD(loadSchemaSource());
  const ownGeneration = String(hostClaimRecordSchemaGeneration);

  it('is not written again by a restart when it holds this server\'s schema', async () => {
    const before = await backingCrd();
    expect(before.metadata.annotations?.[SCHEMA_GENERATION_ANNOTATION]).toBe(ownGeneration);
    const writesBefore = await crdWritesByServer();
    await env.restartServer();
    expect((await backingCrd()).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(await crdWritesByServer()).toEqual(writesBefore);
  }, SCENARIO_TIMEOUT_MS);

  it('is left as it is, with a warning, when a newer schema generation wrote it (an older replica of a rolling upgrade)', async () => {
    const newer = String(hostClaimRecordSchemaGeneration + 1);
    const written = await rewriteBackingCrd({ [SCHEMA_GENERATION_ANNOTATION]: newer }, 'written by a newer server');
    const linesBefore = (await serverLogLines()).length;
    const writesBefore = await crdWritesByServer();
    await env.restartServer();
    const after = await backingCrd();
    expect(after.metadata.resourceVersion).toBe(written.metadata.resourceVersion);
    expect(await crdWritesByServer()).toEqual(writesBefore);
    expect(after.spec.versions[0]?.schema.openAPIV3Schema['description']).toBe('written by a newer server');
    const warnings = (await serverLogLines()).slice(linesBefore).filter((line) => line['crd'] === desired.metadata.name);
    expect(warnings.map((line) => [line['msg'], line['schemaGeneration'], line['storedSchemaGeneration']])).toEqual([
      [
        'backing CRD left as it is: a newer server wrote a newer schema generation (this replica is older; finish the rollout)',
        hostClaimRecordSchemaGeneration,
        hostClaimRecordSchemaGeneration + 1,
      ],
    ]);
  }, SCENARIO_TIMEOUT_MS);

  it('is brought to this server\'s schema when an older server (no generation recorded) wrote it', async () => {
    const written = await rewriteBackingCrd({}, 'written by an older server');
    const writesBefore = await crdWritesByServer();
    await env.restartServer();
    expect(await crdWritesByServer()).toEqual([...writesBefore, `update ${desired.metadata.name}`]);
    const after = await backingCrd();
    expect(after.metadata.resourceVersion).not.toBe(written.metadata.resourceVersion);
    expect(after.metadata.annotations).toEqual({ [SCHEMA_GENERATION_ANNOTATION]: ownGeneration });
    for (const [key, value] of Object.entries(desired.spec)) expect(canonicalJson(after.spec[key]), key).toBe(canonicalJson(value));
  }, SCENARIO_TIMEOUT_MS);
});
