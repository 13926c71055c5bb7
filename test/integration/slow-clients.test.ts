/**
 * Slow and hostile clients (issue 10, item 4), straight to the server's
 * port: thousands of idle TLS connections, slowloris headers and bodies,
 * idle keep-alives, bodies past kube's 3 MiB limit (also one that never
 * ends), watches that never read. Each is dropped at its deadline
 * (src/server/https-server.ts, kube-apiserver's where it has one), the
 * memory it costs the server is bounded (RSS from /proc), and a
 * well-behaved client's GETs keep being answered meanwhile. Time bounds are
 * loose (a loaded 2-core machine): a deadline is checked as "not before it,
 * and not long after".
 */
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { startGetLoop, type GetLoop, type TimedGet } from '../support/get-loop.js';
import { rawClients, type DirectConnection, type RawClients } from '../support/raw-http.js';
import { fromReference, installReferenceCrd, toReference } from '../support/reference-crd.js';
import { connect, connectMany, heldConnections, requestHead, rssMiB, sleep, type SlowClient } from '../support/slow-client.js';

const binDir = inject('controlPlaneBinDir');
let env: DevEnvironment;
let raw: RawClients;
let tenant: DirectConnection;

const collection = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims';
const steady = `${collection}/steady`;
/** One per writer: six merge patches of one claim at once can exhaust the five conflict retries kube (and this server) allow, a 409. */
const churnClaims = ['churn-0', 'churn-1', 'churn-2', 'churn-3', 'churn-4', 'churn-5'];

// The server's deadlines (src/server/https-server.ts).
const readHeaderTimeoutMs = 32_000;
/** The request deadline (`--request-timeout`): a body still arriving then gets kube's 504 and the connection closes. */
const requestDeadlineMs = 60_000;
const keepAliveTimeoutMs = 120_000;
const unreadAnswerTimeoutMs = 60_000;
/** How late a deadline may be enforced on this machine (Node checks every 2 s; timers run late under load). */
const lateness = 30_000;
/** A well-behaved client's GET "still answers within a few seconds". */
const getBoundMs = 5_000;

const timedOut = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
const deadlineExceeded = {
  statusLine: 'HTTP/1.1 504 Gateway Timeout',
  connection: 'close',
  status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 },
};

/** The parts of an answer that do not change between requests (not Date, Audit-Id). */
function deadlineAnswer(received: string): string {
  const [head = '', body = ''] = received.split('\r\n\r\n');
  const [statusLine, ...headers] = head.split('\r\n');
  const connection = headers.find((line) => line.toLowerCase().startsWith('connection:'))?.slice('connection:'.length).trim();
  let status: unknown = body;
  try {
    status = JSON.parse(body);
  } catch {
    // not JSON: compared as text
  }
  return JSON.stringify({ statusLine, connection, status });
}

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `slow-clients-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder' });
  await installReferenceCrd(env);
  raw = await rawClients(env);
  tenant = raw.directConnection({ user: 'tenant-a' });
  for (const name of ['steady', ...churnClaims]) {
    const created = await raw.direct({ user: 'tenant-a' }, { method: 'POST', path: collection, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(claim(name)) });
    expect(created.status).toBe(201);
  }
}, 300_000);

afterAll(async () => {
  await env.stop();
});

function claim(name: string, annotations: Record<string, string> = {}): unknown {
  return { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name, annotations }, spec: { poweredOn: false } };
}

function serverPid(): number {
  const server = env.serverProcess;
  if (server === undefined) throw new Error('hostclaim-apiserver is not running');
  return server.pid;
}

function getLoop(): GetLoop {
  return startGetLoop({ ...tenant, path: steady, headers: { ...tenant.headers, Accept: 'application/json' }, pauseMs: 100, serverPid: serverPid() });
}

/** Every GET answered 200, each within a few seconds: what a well-behaved client saw meanwhile. */
function expectAnswered(gets: readonly TimedGet[]): void {
  expect(gets.length).toBeGreaterThan(0);
  const slowest = Math.max(...gets.map((get) => get.end - get.start));
  expect({ statuses: [...new Set(gets.map((get) => get.status))], slowerThanBound: slowest > getBoundMs ? slowest : 0 }).toEqual({ statuses: [200], slowerThanBound: 0 });
}

/** Samples the server's RSS every second until stopped; the peak. */
function rssPeak(): { stop(): Promise<number> } {
  let peak = 0;
  const state = { running: true };
  const pid = serverPid();
  const sampling = (async () => {
    while (state.running) {
      peak = Math.max(peak, await rssMiB(pid).catch(() => peak));
      await sleep(1000);
    }
  })();
  return {
    async stop() {
      state.running = false;
      await sampling;
      return peak;
    },
  };
}

/** How long each connection lived, from `from(client)` until the server closed it, in whole seconds, as the set of distinct verdicts. */
async function lifetimes(clients: readonly SlowClient[], from: (client: SlowClient) => number, expectedMs: number): Promise<string[]> {
  const closedAt = await Promise.all(clients.map((client) => client.closed));
  const verdicts = closedAt.map((at, i) => {
    const lived = at - from(clients[i] as SlowClient);
    if (lived < expectedMs - 1000) return `closed early, after ${Math.round(lived)} ms`;
    if (lived > expectedMs + lateness) return `closed late, after ${Math.round(lived)} ms`;
    return 'closed at its deadline';
  });
  return [...new Set(verdicts)];
}

describe('slow and idle connections', () => {
  it(
    'thousands of idle connections, slowloris headers and bodies, idle keep-alives: each dropped at its deadline, memory bounded, GETs answered meanwhile',
    async () => {
      const pid = serverPid();
      const rssBefore = await rssMiB(pid);
      const heldBefore = await heldConnections(pid, env.serverPort);
      const loop = getLoop();
      const peak = rssPeak();

      // Opened and left idle: no request ever comes.
      const idle = await connectMany(tenant, 2000, 50);
      // A byte of headers a second, never the blank line.
      const slowHeaders = await connectMany(tenant, 100, 20);
      const headersStarted = new Map<SlowClient, number>();
      for (const client of slowHeaders) {
        client.write(requestHead(tenant, 'GET', steady, {}, false) + 'X-Slow: ');
        headersStarted.set(client, performance.now());
      }
      // Whole headers announcing a body, then a byte of it a second.
      const slowBodies = await connectMany(tenant, 50, 10, { withCertificate: true });
      const bodiesStarted = new Map<SlowClient, number>();
      for (const client of slowBodies) {
        client.write(requestHead(tenant, 'POST', collection, { 'Content-Type': 'application/json', 'Content-Length': '100000' }) + '{');
        bodiesStarted.set(client, performance.now());
      }
      // One GET answered, then the connection kept alive and idle.
      const keepAlives = await connectMany(tenant, 100, 20, { withCertificate: true });
      const answeredAt = new Map<SlowClient, number>();
      await Promise.all(
        keepAlives.map(async (client) => {
          client.write(requestHead(tenant, 'GET', steady, { Accept: 'application/json' }));
          while (!/\r\n\r\n\{.*\}\s*$/s.test(client.received())) await sleep(50);
          answeredAt.set(client, performance.now());
        }),
      );
      const trickle = setInterval(() => {
        for (const client of [...slowHeaders, ...slowBodies]) client.write('a');
      }, 1000);
      try {
        expect(await lifetimes(idle, (client) => client.connectedAt, readHeaderTimeoutMs)).toEqual(['closed at its deadline']);
        expect(await lifetimes(slowHeaders, (client) => headersStarted.get(client) ?? 0, readHeaderTimeoutMs)).toEqual(['closed at its deadline']);
        expect(await lifetimes(slowBodies, (client) => bodiesStarted.get(client) ?? 0, requestDeadlineMs)).toEqual(['closed at its deadline']);
        expect(await lifetimes(keepAlives, (client) => answeredAt.get(client) ?? 0, keepAliveTimeoutMs)).toEqual(['closed at its deadline']);
      } finally {
        clearInterval(trickle);
      }
      const peakRss = await peak.stop();
      expectAnswered(await loop.stop());

      // Slowloris clients are told why (Node's answer to a request not received in time); an idle one is either closed
      // silently or told the same, depending on which of Node's two checks finds it first.
      expect([...new Set(slowHeaders.map((client) => client.received()))]).toEqual([timedOut]);
      // A body still arriving at the request deadline: kube's 504 Timeout Status, then the connection closes.
      expect([...new Set(slowBodies.map((client) => deadlineAnswer(client.received())))]).toEqual([JSON.stringify(deadlineExceeded)]);
      expect(idle.filter((client) => client.received() !== '' && client.received() !== timedOut).map((client) => client.received())).toEqual([]);
      // 2,250 connections at once cost the server under ~130 KiB each (measured 73–100 KiB; garbage collection lags on a
      // loaded machine): a per-connection buffer of even 1 MiB would show as gigabytes.
      console.log(`slow clients: RSS ${rssBefore.toFixed(0)} MiB before, peak ${peakRss.toFixed(0)} MiB`);
      expect(peakRss - rssBefore).toBeLessThan(300);
      // kube-apiserver's own connections to the server (availability checks) come and go meanwhile: two of slack.
      expect(await heldConnections(pid, env.serverPort)).toBeLessThanOrEqual(heldBefore + 2);
    },
    keepAliveTimeoutMs + 4 * lateness,
  );
});

describe('bodies beyond the size limit', () => {
  const limit = 3 * 1024 * 1024;
  const tooLarge = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Request entity too large: limit is ${limit}`, reason: 'RequestEntityTooLarge', code: 413 };

  it('a body past 3 MiB is kube’s 413, through kube-apiserver as on the CRD', async () => {
    const body = JSON.stringify(claim('huge', { filler: 'x'.repeat(limit) }));
    const send = (target: string) =>
      raw.viaAggregator(env.tenantKubeconfigPaths['tenant-a'], { method: 'POST', path: target, headers: { 'Content-Type': 'application/json' }, body: target === collection ? body : toReference(body.replace('tenancy.metal3.io/', 'reference.tenancy.test/')) });
    const [ours, reference] = await Promise.all([send(collection), send(toReference(collection))]);
    expect({ code: reference.status, status: JSON.parse(fromReference(reference.body)) as unknown }).toEqual({ code: 413, status: tooLarge });
    expect({ code: ours.status, status: ours.json }).toEqual({ code: 413, status: tooLarge });
  });

  it('a body that never ends is answered 413 once past the limit and its connection closed, not read on', async () => {
    const pid = serverPid();
    const rssBefore = await rssMiB(pid);
    const loop = getLoop();
    const client = await connect(tenant, { withCertificate: true });
    client.write(requestHead(tenant, 'POST', collection, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
    const chunk = Buffer.from(`10000\r\n${'x'.repeat(0x10000)}\r\n`);
    let sent = 0;
    while (client.closedAt() === undefined && sent < 2 ** 30) {
      if (!client.write(chunk)) await client.drained();
      sent += 0x10000;
    }
    const rssAfter = await rssMiB(pid);
    expectAnswered(await loop.stop());
    const [head, body] = client.received().split('\r\n\r\n');
    // (Node's reason phrase is "Payload Too Large", Go's "Request Entity Too Large": clients read the code.)
    expect(head?.split(' ')[1]).toBe('413');
    expect(JSON.parse(body ?? '') as unknown).toEqual(tooLarge);
    // The server stopped reading right after the limit: what was sent beyond it is what the kernel buffers held.
    expect(sent).toBeLessThan(limit + 32 * 1024 * 1024);
    expect(rssAfter - rssBefore).toBeLessThan(50);
  });
});

describe('watches that never read', () => {
  it('are closed as slow consumers once their buffer is full and dropped when they do not take the end, costing little; a reading watcher gets every event', async () => {
    const pid = serverPid();
    const list = await raw.direct({ user: 'tenant-a' }, { path: collection });
    const resourceVersion = (list.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const watchPath = `${collection}?watch=true&resourceVersion=${resourceVersion}`;
    const heldBefore = await heldConnections(pid, env.serverPort);
    const reader = readingWatch(watchPath);
    const loop = getLoop();
    const updates = 1500;

    // The same burst of updates, first with only the reading watcher (the watch history fills with 1,000 large events) ...
    const withoutStuck = rssPeak();
    await writeUpdates(updates);
    const peakWithoutStuck = await withoutStuck.stop();

    // ... then with 20 watchers that never read a byte.
    const stuck = await connectMany(tenant, 20, 10, { withCertificate: true });
    for (const client of stuck) {
      client.pause();
      client.write(requestHead(tenant, 'GET', watchPath, { Accept: 'application/json' }));
    }
    // The 21 watches are held (kube-apiserver's own connections to the server come and go meanwhile: two of slack, as above).
    await waitFor(async () => (await heldConnections(pid, env.serverPort)) >= heldBefore + 21, 20_000);
    expect(await heldConnections(pid, env.serverPort)).toBeGreaterThanOrEqual(heldBefore + 19);
    const withStuck = rssPeak();
    await writeUpdates(updates);
    const written = performance.now();
    // The hub closes each stuck watcher once 1,000 events wait for it; its unsent end is then dropped within unreadAnswerTimeoutMs.
    while ((await heldConnections(pid, env.serverPort)) > heldBefore + 2 && performance.now() - written < unreadAnswerTimeoutMs + 2 * lateness) await sleep(1000);
    const droppedAfter = performance.now() - written;
    const peakWithStuck = await withStuck.stop();
    expectAnswered(await loop.stop());

    expect(await heldConnections(pid, env.serverPort)).toBeLessThanOrEqual(heldBefore + 2);
    expect(droppedAfter).toBeLessThan(unreadAnswerTimeoutMs + 2 * lateness);
    await waitFor(() => reader.modified() >= 2 * updates, 30_000);
    expect(reader.modified()).toBe(2 * updates);
    reader.close();
    console.log(`stuck watchers: peak RSS ${peakWithoutStuck.toFixed(0)} MiB without, ${peakWithStuck.toFixed(0)} MiB with 20; dropped ${(droppedAfter / 1000).toFixed(0)} s after the last write`);
    // Were each to hold a copy of the 1,000 events it fell behind by (32 MiB), 20 would cost 640 MiB. Measured: 100–164 MiB
    // more at the peak, garbage collection's timing included (the peaks of two bursts differ by tens of MiB anyway); the
    // bound, half of the copies' cost, fails on copies and not on the collector's timing.
    expect(peakWithStuck - peakWithoutStuck).toBeLessThan(320);
    // A stuck client that reads at last gets what its kernel buffers held, then the end.
    for (const client of stuck) client.resume();
    await Promise.all(stuck.map((client) => client.closed));
    expect(stuck.every((client) => client.received().startsWith('HTTP/1.1 200 OK'))).toBe(true);
  }, 600_000);
});

/** `count` updates of the churn claims, each with a 32 KiB annotation (so a watcher's kernel buffers fill with a few hundred events), one writer per claim over kept-alive connections. */
async function writeUpdates(count: number): Promise<void> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: churnClaims.length });
  const filler = 'y'.repeat(32 * 1024);
  let next = 0;
  const worker = async (claimName: string): Promise<void> => {
    while (next < count) {
      const sequence = next++;
      const status = await new Promise<number>((resolve, reject) => {
        const request = https.request(
          { ...tenant, agent, method: 'PATCH', path: `${collection}/${claimName}`, headers: { ...tenant.headers, 'Content-Type': 'application/merge-patch+json' } },
          (response) => {
            response.resume();
            response.on('end', () => { resolve(response.statusCode ?? 0); });
          },
        );
        request.on('error', reject);
        request.end(JSON.stringify({ metadata: { annotations: { filler, sequence: String(sequence) } } }));
      });
      if (status !== 200) throw new Error(`update ${sequence}: ${status}`);
    }
  };
  try {
    await Promise.all(churnClaims.map(worker));
  } finally {
    agent.destroy();
  }
}

/** A watch that reads everything, counting MODIFIED events. */
function readingWatch(watchPath: string): { modified(): number; close(): void } {
  let modified = 0;
  let pending = '';
  const request = https.get({ ...tenant, agent: false, path: watchPath, headers: { ...tenant.headers, Accept: 'application/json' } }, (response) => {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      modified += lines.filter((line) => line.startsWith('{"type":"MODIFIED"')).length;
    });
    response.on('error', () => undefined);
  });
  request.on('error', () => undefined);
  return { modified: () => modified, close: () => request.destroy() };
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition()) && performance.now() < deadline) await sleep(200);
}
