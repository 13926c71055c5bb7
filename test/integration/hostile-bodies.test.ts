/**
 * Hostile request bodies (issue 15, item 2) and answers that must be a
 * Status (item 5): 1–2 MB bodies with 100,000 keys, 10,000-deep nesting
 * and YAML alias bombs, for every verb that reads a body, while a loop of
 * GETs runs beside them. Each answer is compared with kube-apiserver's for
 * the same request on the reference CRD, in the same run; each is a 4xx
 * Status within a second of the server's time (the time to the answer less
 * what its threads waited for a CPU; or kube-apiserver's whole time for it,
 * when this shared machine is so loaded that kube needs longer); no GET beside them
 * waits 100 ms for the server (its time less what the server's event-loop
 * thread spent waiting for a CPU, from the kernel's schedstat), and the
 * server's event loop is never held 100 ms (its own CPU time, from /metrics).
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { cpuWaitBetween, runQueueWaits } from '../support/cpu-wait.js';
import { now, serverWait, startGetLoop, type GetLoop, type TimedGet } from '../support/get-loop.js';
import { rawClients, type RawClients, type RawRequest, type RawResponse } from '../support/raw-http.js';
import { fromReference, installReferenceCrd, toReference } from '../support/reference-crd.js';

const binDir = inject('controlPlaneBinDir');
let env: DevEnvironment;
let raw: RawClients;

const collection = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims';
const claimName = 'target';
const object = `${collection}/${claimName}`;

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `hostile-bodies-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder' });
  await installReferenceCrd(env);
  raw = await rawClients(env);
  for (const target of [collection, toReference(collection)]) {
    const created = await asTenant({
      method: 'POST',
      path: target,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: target.split('/').slice(2, 4).join('/'), kind: 'HostClaim', metadata: { name: claimName }, spec: { poweredOn: false } }),
    });
    expect(created.status).toBe(201);
  }
}, 300_000);

afterAll(async () => {
  await env.stop();
});

/**
 * How long the server's event loop was held since the last call (both
 * figures reset on every scrape of /metrics):
 * - busy: the most CPU time its thread spent between two turns of a 10 ms
 *   timer, an upper bound on the longest task whatever else the machine runs;
 * - lag: prom-client's nodejs_eventloop_lag_max_seconds (wall time, so it also
 *   counts waiting for a CPU on a loaded machine).
 */
async function eventLoopFigures(): Promise<{ busyMs: number; lagMs: number }> {
  const metrics = await raw.direct({ user: 'admin', groups: ['system:masters'] }, { path: '/metrics', headers: { Accept: 'text/plain' } });
  const figure = (name: string): number => {
    const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics.body)?.[1];
    if (value === undefined) throw new Error(`no ${name} in /metrics (${metrics.status})`);
    return Number(value) * 1000;
  };
  return { busyMs: figure('hostclaim_apiserver_event_loop_busy_max_seconds'), lagMs: figure('nodejs_eventloop_lag_max_seconds') };
}

function latencySummary(latencies: number[]): string {
  latencies.sort((a, b) => a - b);
  const percentile = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0);
  return `max ${Math.round(latencies.at(-1) ?? 0)} ms, p99 ${percentile(0.99)} ms, p50 ${percentile(0.5)} ms`;
}

const unanswered = (error: unknown): RawResponse => ({ status: 0, headers: {}, body: String(error), json: undefined });

/** A hostile request as the reference CRD gets it. */
function toReferenceRequest(request: RawRequest): RawRequest {
  const body = typeof request.body === 'string' ? toReference(request.body.replaceAll('tenancy.metal3.io/', 'reference.tenancy.test/')) : request.body;
  return { ...request, path: toReference(request.path), body };
}

interface Attempt {
  readonly answer: RawResponse;
  /** The time to the answer's last byte, less the longest any of the server's threads waited for a CPU meanwhile. */
  readonly elapsed: number;
  readonly wallTime: number;
  /** The GETs of the loop in flight while the request was. */
  readonly gets: readonly TimedGet[];
  /** The longest a GET beside the request waited for the server (serverWait). */
  readonly slowestGet: number;
}

async function attempt(request: RawRequest, gets: GetLoop, serverPid: number): Promise<Attempt> {
  const waitedBefore = runQueueWaits(serverPid);
  const from = now();
  const answer = await asTenant(request).catch(unanswered);
  const to = now();
  const cpuWait = cpuWaitBetween(waitedBefore, runQueueWaits(serverPid));
  const beside = await gets.during(from, to);
  // The kernel accounts a wait when the thread gets its CPU, so a wait begun just before `from` can exceed the interval.
  return { answer, elapsed: Math.max(0, to - from - cpuWait), wallTime: to - from, gets: beside, slowestGet: Math.max(0, ...beside.map(serverWait)) };
}

/**
 * The issue's second is kube-apiserver's 0.8 s on these bodies with a machine to itself. When this machine is so
 * loaded that kube-apiserver needs longer for the same request (measured in this run), its time is the bound.
 */
const answerBound = (referenceElapsed: number): number => Math.max(1000, referenceElapsed);

/** kube's answer for a hostile request on the reference CRD, and how long it took (the faster of two when slow). */
async function referenceAnswer(request: RawRequest): Promise<{ readonly answer: RawResponse; readonly elapsed: number }> {
  const timed = async () => {
    const from = now();
    const answer = await asTenant(toReferenceRequest(request)).catch(unanswered);
    return { answer, elapsed: now() - from };
  };
  const first = await timed();
  return first.elapsed < 1000 ? first : { answer: first.answer, elapsed: Math.min(first.elapsed, (await timed()).elapsed) };
}

function asTenant(request: RawRequest): Promise<RawResponse> {
  return raw.viaAggregator(env.tenantKubeconfigPaths['tenant-a'], request);
}

const manyKeys = (count: number): Record<string, string> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, `v${i}`]));
const deepJson = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const yamlKeys = (count: number, indent: string): string => Array.from({ length: count }, (_, i) => `${indent}k${i}: v${i}\n`).join('');
const header = 'apiVersion: tenancy.metal3.io/v1alpha1\nkind: HostClaim\nmetadata:\n  name: target\n';
const billionLaughs =
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' +
  ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefghi'[i] ?? ''}`).join(',')}]\n`).join('');

interface Case {
  readonly name: string;
  readonly request: RawRequest;
  /** Where the answer is known to differ from kube's (owned by another item of issue 15). */
  readonly knownDifference?: string;
}

const cases: Case[] = [
  { name: 'create: JSON, 100,000 keys', request: { method: 'POST', path: `${collection}?fieldValidation=Strict`, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'keys' }, spec: manyKeys(100_000) }) } },
  { name: 'create: YAML, 100,000 keys', request: { method: 'POST', path: `${collection}?fieldValidation=Strict`, headers: { 'Content-Type': 'application/yaml' }, body: `${header}spec:\n${yamlKeys(100_000, '  ')}` } },
  { name: 'create: JSON, 10,000 deep', request: { method: 'POST', path: collection, headers: { 'Content-Type': 'application/json' }, body: `{"apiVersion":"tenancy.metal3.io/v1alpha1","kind":"HostClaim","metadata":{"name":"deep"},"spec":${deepJson(10_000)}}` } },
  { name: 'create: YAML, 10,000 deep', request: { method: 'POST', path: collection, headers: { 'Content-Type': 'application/yaml' }, body: `${header}spec: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n` } },
  { name: 'create: YAML billion laughs', request: { method: 'POST', path: collection, headers: { 'Content-Type': 'application/yaml' }, body: `${header}spec:\n${billionLaughs.replace(/^/gm, '  ')}` } },
  { name: 'create: YAML self-reference', request: { method: 'POST', path: collection, headers: { 'Content-Type': 'application/yaml' }, body: `${header}spec: &a\n  x: *a\n` } },
  { name: 'update: JSON, 10,000 deep', request: { method: 'PUT', path: object, headers: { 'Content-Type': 'application/json' }, body: `{"apiVersion":"tenancy.metal3.io/v1alpha1","kind":"HostClaim","metadata":{"name":"target"},"spec":${deepJson(10_000)}}` } },
  { name: 'merge patch: 100,000 keys', knownDifference: 'kube answers 422 for unknown fields in a merge patch (issue 15 item 4)', request: { method: 'PATCH', path: `${object}?fieldValidation=Strict`, headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: manyKeys(100_000) }) } },
  { name: 'merge patch: 10,000 deep', request: { method: 'PATCH', path: object, headers: { 'Content-Type': 'application/merge-patch+json' }, body: `{"spec":${deepJson(10_000)}}` } },
  { name: 'JSON patch: 20,000 operations', request: { method: 'PATCH', path: object, headers: { 'Content-Type': 'application/json-patch+json' }, body: JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ op: 'add', path: `/spec/k${i}`, value: i }))) } },
  { name: 'JSON patch: 10,000 deep value', request: { method: 'PATCH', path: object, headers: { 'Content-Type': 'application/json-patch+json' }, body: `[{"op":"add","path":"/spec/x","value":${deepJson(10_000)}}]` } },
  { name: 'apply: YAML, 100,000 keys', knownDifference: 'kube answers 500 (cannot build a typed patch, naming one random field); this server the 400 it should be, naming the first (issue 15 item 4)', request: { method: 'PATCH', path: `${object}?fieldManager=hostile&fieldValidation=Strict`, headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: `${header}spec:\n${yamlKeys(100_000, '  ')}` } },
  { name: 'apply: JSON, 10,000 deep', request: { method: 'PATCH', path: `${object}?fieldManager=hostile`, headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: `{"apiVersion":"tenancy.metal3.io/v1alpha1","kind":"HostClaim","metadata":{"name":"target"},"spec":${deepJson(10_000)}}` } },
  { name: 'apply: YAML billion laughs', request: { method: 'PATCH', path: `${object}?fieldManager=hostile`, headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: `${header}spec:\n${billionLaughs.replace(/^/gm, '  ')}` } },
  { name: 'apply: YAML self-reference', request: { method: 'PATCH', path: `${object}?fieldManager=hostile`, headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: `${header}spec: &a\n  x: *a\n` } },
  { name: 'delete: DeleteOptions 10,000 deep', request: { method: 'DELETE', path: object, headers: { 'Content-Type': 'application/json' }, body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":${deepJson(10_000)}}` } },
];

describe('hostile bodies', () => {
  it('are each answered as kube-apiserver answers them with a 4xx Status within a second, while no GET beside them waits 100 ms', async () => {
    // kube's answers first, with nothing beside them: kube-apiserver's own work on these bodies (seconds of CPU on a
    // 2-core machine) would starve a GET of any server, and the GETs are about this one.
    const references: { readonly answer: RawResponse; readonly elapsed: number }[] = [];
    for (const { request } of cases) references.push(await referenceAnswer(request));
    await eventLoopFigures();
    // As system:masters and at resourceVersion=0: the server answers from its cache, asking kube-apiserver nothing.
    // What a GET waits for a CPU on this shared machine (other tests, kube-apiserver) is taken off its time, from the
    // kernel's schedstat of the server's event-loop thread: what is left is the server's own doing.
    const serverPid = env.serverProcess?.pid;
    if (serverPid === undefined) throw new Error('the server is not running');
    const gets = startGetLoop({ ...raw.directConnection({ user: 'admin', groups: ['system:masters'] }), path: `${object}?resourceVersion=0`, pauseMs: 2, serverPid });
    const results: {
      readonly name: string;
      readonly attempts: readonly Attempt[];
      readonly counted: Attempt;
      readonly reference: RawResponse;
      readonly bound: number;
      readonly knownDifference: string | undefined;
    }[] = [];
    let allGets: TimedGet[];
    try {
      for (const [index, { name, request, knownDifference }] of cases.entries()) {
        const reference = references[index] as { readonly answer: RawResponse; readonly elapsed: number };
        const bound = answerBound(reference.elapsed);
        const withinBounds = (a: Attempt): boolean => a.elapsed < bound && a.slowestGet < 100;
        const first = await attempt(request, gets, serverPid);
        // This machine's load comes in bursts: a request that missed a bound is sent once more, and that attempt
        // counts. A stall of this server comes back every time.
        const again = withinBounds(first) ? undefined : await attempt(request, gets, serverPid);
        const attempts = again === undefined ? [first] : [first, again];
        results.push({ name, attempts, counted: again ?? first, reference: reference.answer, bound, knownDifference });
      }
    } finally {
      allGets = await gets.stop();
    }
    const eventLoop = await eventLoopFigures();
    const summary = (r: RawResponse) => `${r.status} ${(r.json as { reason?: string } | undefined)?.reason ?? ''} ${((r.json as { message?: string } | undefined)?.message ?? r.body).slice(0, 160)}`;
    console.log(
      results
        .map(({ name, attempts, reference, bound }) => {
          const timings = attempts
            .map((a) => `${Math.round(a.elapsed)} ms of the server's (${Math.round(a.wallTime)} ms in all), ${a.gets.length} GETs beside it waiting at most ${Math.round(a.slowestGet)} ms for the server (${Math.round(Math.max(0, ...a.gets.map((g) => g.end - g.start)))} ms in all)`)
            .join('; again: ');
          return `${name}: ${timings} (bound ${Math.round(bound)} ms)\n  ours: ${summary((attempts.at(-1) as Attempt).answer)}\n  kube: ${summary(reference)}`;
        })
        .join('\n'),
      `\nGET loop (direct, resourceVersion=0), ${allGets.length} GETs: in all ${latencySummary(allGets.map((g) => g.end - g.start))}; waiting for the server ${latencySummary(allGets.map(serverWait))}`,
      `\nevent loop: busy at most ${Math.round(eventLoop.busyMs)} ms of CPU, lag at most ${Math.round(eventLoop.lagMs)} ms of wall time`,
    );
    const reasonOf = (r: RawResponse) => (r.json as { reason?: string } | undefined)?.reason;
    for (const { name, counted, reference, bound, knownDifference } of results) {
      const ours = counted.answer;
      expect((ours.json as { kind?: string } | undefined)?.kind, name).toBe('Status');
      expect(ours.status, name).toBeGreaterThanOrEqual(400);
      expect(ours.status, name).toBeLessThan(500);
      expect({ name, answeredWithinBound: counted.elapsed < bound, slowestGetUnder100ms: counted.slowestGet < 100 }).toEqual({ name, answeredWithinBound: true, slowestGetUnder100ms: true });
      // The loop ran beside every request that lasted long enough to hold a GET 100 ms: the bound is about GETs that were there.
      if (counted.wallTime >= 100) expect(counted.gets.length, name).toBeGreaterThan(0);
      expect(counted.gets.map((get) => get.status), name).toEqual(counted.gets.map(() => 200));
      if (knownDifference !== undefined) continue;
      expect({ name, status: ours.status, reason: reasonOf(ours) }).toEqual({ name, status: reference.status, reason: reasonOf(reference) });
      // Unknown fields are pruned and reported here, no longer by kube-apiserver: the same 100,000 fields, in the same order.
      if (ours.body.includes('strict decoding error')) expect(ours.json, name).toEqual(JSON.parse(fromReference(reference.body)));
    }
    expect(allGets.every((get) => get.status === 200)).toBe(true);
    // No task held the server's event loop 100 ms: its own CPU time, whatever else this machine runs.
    expect(eventLoop.busyMs).toBeLessThan(100);
  }, 600_000);
});
