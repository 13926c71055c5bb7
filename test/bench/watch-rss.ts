/**
 * RSS cost of watchers (issue #12, item 5): starts the real request pipeline
 * and REST layer with a HostClaim hub in a child process (so only the
 * server's memory is measured), opens N watches on it over TLS as the
 * aggregator does (front-proxy certificate, one connection each), then
 * publishes writes and checks every watcher got every event. Prints the
 * child's RSS before and after the watchers, and per watcher.
 *
 *   npx tsx test/bench/watch-rss.ts [watchers=1000] [writes=10] [source root=.]
 *
 * The source root lets the same script measure another checkout (e.g. a
 * worktree of the main branch, with node_modules linked) for a before/after
 * comparison. Not a test: figures depend on the machine.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { everyNamespace } from '../support/read-access.js';

interface Pki {
  readonly serving: { certPem: string; keyPem: string; caPem: string };
  readonly frontProxyClient: { certPem: string; keyPem: string };
  readonly authData: Record<string, string>;
}

interface Rss {
  readonly kind: 'rss';
  readonly bytes: number;
  readonly heap: number;
  readonly external: number;
}

type ChildMessage = { kind: 'listening'; port: number } | Rss | { kind: 'published' };

const self = fileURLToPath(import.meta.url);

async function parent(): Promise<void> {
  const watchers = Number(process.argv[2] ?? 1000);
  const writes = Number(process.argv[3] ?? 10);
  const root = path.resolve(process.argv[4] ?? '.');
  const pki = await createPki(root);
  const child = fork(self, ['--serve', root], { execArgv: ['--import', 'tsx', '--expose-gc'], env: { ...process.env, WATCH_RSS_PKI: JSON.stringify(pki) } });
  const messages = inbox(child);
  const { port } = (await messages.next('listening')) as { port: number };
  await settle();
  child.send({ kind: 'rss' });
  const beforeMessage = (await messages.next('rss')) as Rss;
  const before = beforeMessage.bytes;

  const received: number[] = new Array<number>(watchers).fill(0);
  const requests: ClientRequest[] = [];
  let ready = 0;
  await new Promise<void>((resolve) => {
    for (let i = 0; i < watchers; i++) {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hardwaredata?watch=1&resourceVersion=100',
          headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' },
          ca: pki.serving.caPem,
          servername: 'localhost',
          cert: pki.frontProxyClient.certPem,
          key: pki.frontProxyClient.keyPem,
          agent: false,
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            received[i] = (received[i] ?? 0) + (chunk.match(/\n/g)?.length ?? 0);
          });
          ready++;
          if (ready === watchers) resolve();
        },
      );
      req.on('error', () => undefined);
      req.end();
      requests.push(req);
    }
  });
  await settle();
  child.send({ kind: 'rss' });
  const withWatchersMessage = (await messages.next('rss')) as Rss;
  const withWatchers = withWatchersMessage.bytes;
  child.send({ kind: 'publish', count: writes });
  await messages.next('published');
  for (let i = 0; i < 600 && received.some((n) => n < writes); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  await settle();
  child.send({ kind: 'rss' });
  const afterWrites = ((await messages.next('rss')) as Rss).bytes;
  const delivered = received.reduce((a, b) => a + b, 0);
  for (const req of requests) req.destroy();
  child.kill();
  const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
  console.log(`source: ${root}`);
  console.log(`watchers: ${watchers}, writes: ${writes}, events delivered: ${delivered} of ${watchers * writes}`);
  console.log(`server RSS: idle ${mb(before)} MB, with watchers ${mb(withWatchers)} MB, after the writes ${mb(afterWrites)} MB`);
  console.log(`per watcher: JS heap ${((withWatchersMessage.heap - beforeMessage.heap) / watchers / 1024).toFixed(1)} KB, external ${((withWatchersMessage.external - beforeMessage.external) / watchers / 1024).toFixed(1)} KB`);
  console.log(`per watcher: ${((withWatchers - before) / watchers / 1024).toFixed(1)} KB (after the writes: ${((afterWrites - before) / watchers / 1024).toFixed(1)} KB)`);
}

async function createPki(root: string): Promise<Pki> {
  const certificates = (await import(pathToFileURL(path.join(root, 'src/pki/certificates.ts')).href)) as typeof import('../../src/pki/certificates.js');
  const support = (await import(pathToFileURL(path.join(root, 'test/support/pki.ts')).href)) as typeof import('../support/pki.js');
  const pki = await support.createTestPki();
  const servingCA = await certificates.createCertificateAuthority('serving-ca');
  const serving = await certificates.issueCertificate(servingCA, { commonName: 'localhost', dnsNames: ['localhost'], usage: 'server' });
  return { serving: { ...serving, caPem: servingCA.certPem }, frontProxyClient: pki.frontProxyClient, authData: support.authenticationConfigMapData(pki) };
}

/** The child: the server with one read-only resource whose hub stores 10 objects of tenant-a, and nothing else. */
async function child(root: string): Promise<void> {
  const load = async <T>(module: string): Promise<T> => (await import(pathToFileURL(path.join(root, module)).href)) as T;
  const { WatchHub } = await load<typeof import('../../src/api/rest/watch-hub.js')>('src/api/rest/watch-hub.ts');
  const { restRouter } = await load<typeof import('../../src/api/rest/handler.js')>('src/api/rest/handler.ts');
  const { tenancyV1alpha1 } = await load<typeof import('../../src/resources/group.js')>('src/resources/group.ts');
  const { parseAuthenticationConfig } = await load<typeof import('../../src/auth/authentication-config.js')>('src/auth/authentication-config.ts');
  const { Authenticator } = await load<typeof import('../../src/auth/authenticator.js')>('src/auth/authenticator.ts');
  const { Authorizer } = await load<typeof import('../../src/auth/authorizer.js')>('src/auth/authorizer.ts');
  const { createLogger } = await load<typeof import('../../src/observability/logger.js')>('src/observability/logger.ts');
  const { ApiServerMetrics } = await load<typeof import('../../src/observability/metrics.js')>('src/observability/metrics.ts');
  const { HttpsServer } = await load<typeof import('../../src/server/https-server.js')>('src/server/https-server.ts');
  const { buildHandlerChain } = await load<typeof import('../../src/server/pipeline.js')>('src/server/pipeline.ts');
  const { TlsContextSwitch } = await load<typeof import('../../src/server/tls-context.js')>('src/server/tls-context.ts');
  const { hardwareDataStrategy } = await load<typeof import('../../src/resources/hardwaredata/strategy.js')>('src/resources/hardwaredata/strategy.ts');

  const pki = JSON.parse(process.env['WATCH_RSS_PKI'] ?? '') as Pki;
  const resource = { group: 'tenancy.metal3.io', resource: 'hardwaredata' };
  const hub = new WatchHub({ resource });
  const claim = (name: string, rv: number) => ({
    apiVersion: 'tenancy.metal3.io/v1alpha1',
    kind: 'HostClaim',
    metadata: { namespace: 'tenant-a', name, uid: `uid-${name}`, resourceVersion: String(rv), labels: { app: 'bench' } },
    spec: { online: true, image: { url: `http://images.example/${name}.qcow2`, checksum: 'sha256:0' }, hostSelector: { matchLabels: { role: 'worker' } } },
  });
  hub.reset('100', Array.from({ length: 10 }, (_, i) => claim(`c-${i}`, 90 + i)));
  const store = { hub, get: () => Promise.reject(new Error('unused')), list: () => Promise.reject(new Error('unused')) };
  const auth = parseAuthenticationConfig(pki.authData);
  const authorizer = new Authorizer(() => Promise.resolve({ allowed: false, reason: '' }));
  const app = buildHandlerChain({
    logger: createLogger('silent'),
    metrics: new ApiServerMetrics(),
    authenticator: new Authenticator(() => auth, { authenticate: () => Promise.resolve({ kind: 'none' as const }) }),
    authorizer,
    inFlightLimits: { readOnly: 400, mutating: 200 },
    requestTimeoutMs: 60_000,
    handlers: [restRouter(tenancyV1alpha1, [{ access: 'read-only', strategy: hardwareDataStrategy(authorizer), store }], everyNamespace)],
  });
  const server = new HttpsServer(app, new TlsContextSwitch({ certPem: pki.serving.certPem, keyPem: pki.serving.keyPem }, auth));
  const { port } = await server.listen(0, '127.0.0.1');
  let rv = 100;
  process.on('message', (message: { kind: string; count?: number }) => {
    if (message.kind === 'rss') {
      globalThis.gc?.();
      process.send?.({ kind: 'rss', bytes: rssBytes(), heap: process.memoryUsage().heapUsed, external: process.memoryUsage().external });
    } else if (message.kind === 'publish') {
      for (let i = 0; i < (message.count ?? 0); i++) hub.publish({ type: 'MODIFIED', object: claim(`c-${i % 10}`, ++rv) });
      process.send?.({ kind: 'published' });
    }
  });
  process.send?.({ kind: 'listening', port });
}

function rssBytes(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

/** Lets the server finish what the last step started (GC, TLS handshakes). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2000));
}

function inbox(child: ChildProcess): { next: (kind: ChildMessage['kind']) => Promise<ChildMessage> } {
  const queue: ChildMessage[] = [];
  const waiting: { kind: string; resolve: (m: ChildMessage) => void }[] = [];
  child.on('message', (message: ChildMessage) => {
    const index = waiting.findIndex((w) => w.kind === message.kind);
    if (index >= 0) waiting.splice(index, 1)[0]?.resolve(message);
    else queue.push(message);
  });
  return {
    next: (kind) => {
      const index = queue.findIndex((m) => m.kind === kind);
      if (index >= 0) return Promise.resolve(queue.splice(index, 1)[0] as ChildMessage);
      return new Promise((resolve) => waiting.push({ kind, resolve }));
    },
  };
}

if (process.argv[2] === '--serve') await child(path.resolve(process.argv[3] ?? '.'));
else await parent();
