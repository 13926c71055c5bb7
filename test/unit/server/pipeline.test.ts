/**
 * The request pipeline over real TLS on loopback: who gets through
 * authentication, what authorization sees, and that every failure is a
 * metav1.Status with kube's wording. The authorizer and TokenReview are
 * stand-ins here; the integration tests use kube-apiserver's.
 */
import { once } from 'node:events';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { Router, type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tenancyV1alpha1 } from '../../../src/resources/group.js';
import { discoveryRouter } from '../../../src/api/discovery-handler.js';
import { discoveryV2ContentType } from '../../../src/api/discovery.js';
import { parseAuthenticationConfig, type AuthenticationConfig } from '../../../src/auth/authentication-config.js';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { Authorizer, type Attributes, type Decision } from '../../../src/auth/authorizer.js';
import type { UserInfo } from '../../../src/api/user.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ApiServerMetrics } from '../../../src/observability/metrics.js';
import { createCertificateAuthority, issueCertificate } from '../../../src/pki/certificates.js';
import { requestUser } from '../../../src/api/request-context.js';
import { HealthChecks } from '../../../src/server/health.js';
import { HttpsServer } from '../../../src/server/https-server.js';
import { buildHandlerChain } from '../../../src/server/pipeline.js';
import { TlsContextSwitch } from '../../../src/server/tls-context.js';
import { json, request } from '../../support/https-client.js';
import { authenticationConfigMapData, createTestPki, type TestPki } from '../../support/pki.js';

let pki: TestPki;
let servingCAPem: string;
let server: HttpsServer;
let port: number;
let auth: AuthenticationConfig;
let tlsContext: TlsContextSwitch;
const authorizationCalls: { user: UserInfo; attributes: Attributes }[] = [];

/** The SubjectAccessReview stand-in: allows tenant-a in its own namespace and non-resource paths. */
function review(user: UserInfo, attributes: Attributes): Promise<Decision> {
  authorizationCalls.push({ user, attributes });
  const allowed = attributes.kind === 'nonResource' || (user.name === 'tenant-a' && attributes.namespace === 'tenant-a');
  return Promise.resolve({ allowed, reason: '' });
}

beforeAll(async () => {
  pki = await createTestPki();
  const servingCA = await createCertificateAuthority('serving-ca');
  servingCAPem = servingCA.certPem;
  const serving = await issueCertificate(servingCA, { commonName: 'localhost', dnsNames: ['localhost'], usage: 'server' });
  auth = parseAuthenticationConfig(authenticationConfigMapData(pki));
  const tokens = {
    authenticate: (credentials: { headers: Readonly<Record<string, readonly string[] | undefined>> }) =>
      Promise.resolve(
        credentials.headers['authorization']?.[0] === 'Bearer good-token'
          ? { kind: 'authenticated' as const, method: 'token' as const, user: { name: 'bob', uid: '', groups: [], extra: {} } }
          : credentials.headers['authorization'] === undefined
            ? { kind: 'none' as const }
            : { kind: 'failed' as const, error: 'invalid bearer token' },
      ),
  };
  const whoami = Router();
  whoami.get('/whoami', (req, res) => {
    res.json({ user: requestUser(req), headers: Object.keys(req.headers).filter((h) => h.startsWith('x-remote')) });
  });
  whoami.get('/apis/tenancy.metal3.io/v1alpha1/namespaces/:ns/hostclaims', (req, res) => {
    // A watch answers late, to show the request deadline leaves watches alone.
    setTimeout(() => res.json({ ok: true }), req.url.includes('watch=true') ? 400 : 0);
  });
  // Answers after ?delay= ms, through express's own res.json.
  whoami.get('/slow', (req, res) => {
    setTimeout(() => res.json({ late: true }), Number(new URL(req.url, 'https://x').searchParams.get('delay')));
  });
  // Answers without reading the request's body.
  whoami.post('/refuse-unread', (_req, res) => {
    res.status(403).json({ refused: true });
  });
  // Starts its answer at once and finishes it after a second.
  whoami.get('/slow-stream', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"items":[');
    setTimeout(() => res.end(']}'), 1000);
  });
  tlsContext = new TlsContextSwitch({ certPem: serving.certPem, keyPem: serving.keyPem }, auth);
  ({ server, port } = await serveChain(new Authenticator(() => auth, tokens), tlsContext, [
    new HealthChecks().router(),
    discoveryRouter(tenancyV1alpha1),
    whoami,
  ]));
});

/** The handler chain as the server builds it, around `handlers`, on a loopback port. */
async function serveChain(authenticator: Authenticator, context: TlsContextSwitch, handlers: RequestHandler[]): Promise<{ server: HttpsServer; port: number }> {
  const app = buildHandlerChain({
    logger: createLogger('silent'),
    metrics: new ApiServerMetrics(),
    authenticator,
    authorizer: new Authorizer(review),
    inFlightLimits: { readOnly: 10, mutating: 10 },
    requestTimeoutMs: 60_000,
    handlers,
  });
  const listening = new HttpsServer(app, context);
  return { server: listening, port: (await listening.listen(0, '127.0.0.1')).port };
}

afterAll(async () => {
  await server.shutdown(1000);
});

const asAdmin = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };

function expectStatus(body: Record<string, unknown>, code: number, reason: string, message: string): void {
  expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });
}

describe('authentication stage', () => {
  it('rejects identity headers sent without any client certificate (401 Status)', async () => {
    const res = await request({ port, path: '/whoami', headers: asAdmin, caPem: servingCAPem });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('application/json');
    expectStatus(json(res), 401, 'Unauthorized', 'Unauthorized');
  });

  it('rejects identity headers with a certificate from an untrusted CA', async () => {
    const res = await request({ port, path: '/whoami', headers: asAdmin, caPem: servingCAPem, client: pki.stranger });
    expect(res.status).toBe(401);
  });

  it('rejects identity headers sent with a cluster client certificate', async () => {
    const res = await request({ port, path: '/whoami', headers: asAdmin, caPem: servingCAPem, client: pki.admin });
    expect(res.status).toBe(401);
  });

  it('trusts the front proxy, keeps every group header line and hides the headers from handlers', async () => {
    const res = await request({
      port,
      path: '/whoami',
      headers: { 'X-Remote-User': 'tenant-a', 'X-Remote-Group': ['g1', 'g2,with,commas'], 'X-Remote-Uid': 'u-1' },
      caPem: servingCAPem,
      client: pki.frontProxyClient,
    });
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({
      user: { name: 'tenant-a', uid: 'u-1', groups: ['g1', 'g2,with,commas', 'system:authenticated'], extra: {} },
      headers: [],
    });
  });

  it('authenticates cluster client certificates as CN with O groups', async () => {
    const res = await request({ port, path: '/whoami', caPem: servingCAPem, client: pki.admin });
    expect((json(res)['user'] as UserInfo).groups).toEqual(['team-a', 'ops,night', 'system:authenticated']);
  });

  it('authenticates bearer tokens and rejects bad ones', async () => {
    const good = await request({ port, path: '/whoami', headers: { Authorization: 'Bearer good-token' }, caPem: servingCAPem });
    expect((json(good)['user'] as UserInfo).name).toBe('bob');
    const bad = await request({ port, path: '/whoami', headers: { Authorization: 'Bearer nope' }, caPem: servingCAPem });
    expect(bad.status).toBe(401);
  });

  it('treats requests without credentials as system:anonymous', async () => {
    const res = await request({ port, path: '/whoami', caPem: servingCAPem });
    expect(json(res)['user']).toEqual({ name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'], extra: {} });
  });

  it('does not trust identity headers on a resumed TLS session that had no certificate', async () => {
    // nodejs/node#35317: such a session can report socket.authorized === true with no peer certificate.
    const first = await request({ port, path: '/healthz', caPem: servingCAPem });
    expect(first.session).toBeDefined();
    const resumed = await request({ port, path: '/whoami', headers: asAdmin, caPem: servingCAPem, session: first.session! });
    expect(resumed.resumed).toBe(true);
    expect(resumed.status).toBe(401);
  });
});

describe('authentication before the CAs are loaded (a replica\'s first moments)', () => {
  let early: HttpsServer;
  let earlyPort: number;
  let caPem: string;
  let loaded: AuthenticationConfig | undefined;

  beforeAll(async () => {
    const servingCA = await createCertificateAuthority('early-serving-ca');
    caPem = servingCA.certPem;
    const serving = await issueCertificate(servingCA, { commonName: 'localhost', dnsNames: ['localhost'], usage: 'server' });
    const noTokens = { authenticate: () => Promise.resolve({ kind: 'none' as const }) };
    const whoami = Router();
    whoami.get('/whoami', (req, res) => {
      res.json({ user: requestUser(req).name });
    });
    const context = new TlsContextSwitch({ certPem: serving.certPem, keyPem: serving.keyPem }, undefined);
    ({ server: early, port: earlyPort } = await serveChain(new Authenticator(() => loaded, noTokens), context, [whoami]));
  });

  afterAll(async () => {
    await early.shutdown(1000);
  });

  it('answers a certificate it cannot verify yet with a retriable 503, not a 401 the client would take as final; the same request passes once they are', async () => {
    const asFrontProxy = { port: earlyPort, path: '/whoami', headers: { 'X-Remote-User': 'tenant-a' }, caPem, client: pki.frontProxyClient };
    const before = await request(asFrontProxy);
    expect(before.status).toBe(503);
    expect(before.headers['retry-after']).toBe('1');
    expectStatus(json(before), 503, 'ServiceUnavailable', 'the server is currently unable to handle the request: authentication is unavailable; please try again');
    loaded = auth;
    const after = await request(asFrontProxy);
    expect(after.status).toBe(200);
    expect(json(after)).toEqual({ user: 'tenant-a' });
    loaded = undefined;
  });

  it('serves a request without a certificate meanwhile (a probe), as anonymous', async () => {
    const res = await request({ port: earlyPort, path: '/whoami', caPem });
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({ user: 'system:anonymous' });
  });
});

describe('authentication on a kept-alive connection', () => {
  /** Requests over one connection, reporting the client port each answer came on. */
  function keepAliveClient(client: { certPem: string; keyPem: string }) {
    const tlsOptions = { ca: servingCAPem, cert: client.certPem, key: client.keyPem, servername: 'localhost' };
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ...tlsOptions });
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string; clientPort: number | undefined }>((resolve, reject) => {
        const req = https.get({ host: '127.0.0.1', port, path: '/whoami', headers, agent }, (res) => {
          const clientPort = res.socket.localPort;
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body, clientPort });
          });
        });
        req.on('error', reject);
      });
    return {
      get,
      close: () => {
        agent.destroy();
      },
    };
  }

  it('verifies the connection chain against the current CAs on every request, not once per connection', async () => {
    const client = keepAliveClient(pki.frontProxyClient);
    const original = auth;
    try {
      const first = await client.get({ 'X-Remote-User': 'tenant-a' });
      expect(first.status).toBe(200);
      expect((JSON.parse(first.body) as { user: UserInfo }).user.name).toBe('tenant-a');
      // The front-proxy CA rotates to one that did not issue this connection's certificate.
      auth = parseAuthenticationConfig({ ...authenticationConfigMapData(pki), 'requestheader-client-ca-file': pki.strangerCA.certPem });
      const second = await client.get({ 'X-Remote-User': 'tenant-a' });
      expect(second.clientPort).toBe(first.clientPort);
      expect(second.status).toBe(401);
      auth = original;
      const third = await client.get({ 'X-Remote-User': 'tenant-b' });
      expect(third.clientPort).toBe(first.clientPort);
      expect((JSON.parse(third.body) as { user: UserInfo }).user.name).toBe('tenant-b');
    } finally {
      auth = original;
      client.close();
    }
  });

  it('verifies the peer certificate a resumed session carries against the current CAs', async () => {
    const original = auth;
    try {
      const first = await request({ port, path: '/whoami', headers: { 'X-Remote-User': 'tenant-a' }, caPem: servingCAPem, client: pki.frontProxyClient });
      expect(first.status).toBe(200);
      expect(first.session).toBeDefined();
      // The resumed session presents no certificate; the server still holds the one of the first handshake.
      const resumed = await request({ port, path: '/whoami', headers: { 'X-Remote-User': 'tenant-b' }, caPem: servingCAPem, session: first.session! });
      expect(resumed.resumed).toBe(true);
      expect((json(resumed)['user'] as UserInfo).name).toBe('tenant-b');
      auth = parseAuthenticationConfig({ ...authenticationConfigMapData(pki), 'requestheader-client-ca-file': pki.strangerCA.certPem });
      const afterRotation = await request({ port, path: '/whoami', headers: { 'X-Remote-User': 'tenant-b' }, caPem: servingCAPem, session: first.session! });
      expect(afterRotation.resumed).toBe(true);
      expect(afterRotation.status).toBe(401);
    } finally {
      auth = original;
    }
  });

  /** A TLS 1.2 client with the front-proxy certificate asks to renegotiate; the answer is the error it gets. */
  function renegotiationError(): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect(
        {
          host: '127.0.0.1',
          port,
          servername: 'localhost',
          ca: servingCAPem,
          cert: pki.frontProxyClient.certPem,
          key: pki.frontProxyClient.keyPem,
          maxVersion: 'TLSv1.2',
        },
        () => {
          socket.renegotiate({}, (error: NodeJS.ErrnoException | null) => {
            socket.destroy();
            resolve(error?.code);
          });
        },
      );
      socket.on('error', (error: Error & { code?: string }) => {
        socket.destroy();
        resolve(error.code);
      });
      socket.on('timeout', () => {
        reject(new Error('no answer to the renegotiation'));
      });
      socket.setTimeout(10_000);
    });
  }

  it("refuses TLS renegotiation, as Go's server does, so a connection's peer certificate never changes", async () => {
    expect(await renegotiationError()).toBe('ERR_SSL_NO_RENEGOTIATION');
    // Still refused after the TLS context is rebuilt for new client CAs.
    tlsContext.updateAuthentication(auth);
    expect(await renegotiationError()).toBe('ERR_SSL_NO_RENEGOTIATION');
  });
});

describe('authorization stage', () => {
  it('answers 403 with kube wording for a denied resource request', async () => {
    const res = await request({
      port,
      path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims',
      headers: { 'X-Remote-User': 'tenant-b', 'X-Remote-Group': 'system:authenticated' },
      caPem: servingCAPem,
      client: pki.frontProxyClient,
    });
    expect(res.status).toBe(403);
    expectStatus(
      json(res),
      403,
      'Forbidden',
      'hostclaims.tenancy.metal3.io is forbidden: User "tenant-b" cannot list resource "hostclaims" in API group "tenancy.metal3.io" in the namespace "tenant-a"',
    );
    expect(authorizationCalls.at(-1)?.attributes).toEqual({
      kind: 'resource',
      verb: 'list',
      group: 'tenancy.metal3.io',
      version: 'v1alpha1',
      resource: 'hostclaims',
      subresource: '',
      namespace: 'tenant-a',
      name: '',
    });
  });

  it('lets system:masters through without a SubjectAccessReview', async () => {
    const before = authorizationCalls.length;
    const res = await request({
      port,
      path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/anywhere/hostclaims',
      headers: asAdmin,
      caPem: servingCAPem,
      client: pki.frontProxyClient,
    });
    expect(res.status).toBe(200);
    expect(authorizationCalls.length).toBe(before);
  });

  it('lets an allowed request through to the handler', async () => {
    const res = await request({
      port,
      path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims',
      headers: { 'X-Remote-User': 'tenant-a' },
      caPem: servingCAPem,
      client: pki.frontProxyClient,
    });
    expect(res.status).toBe(200);
  });
});

describe('responses', () => {
  const admin = () => ({ port, caPem: servingCAPem, client: pki.frontProxyClient, headers: asAdmin });

  it("answers unknown paths with kube-apiserver's plain 404 (Go's http.NotFound)", async () => {
    const res = await request({ ...admin(), path: '/apis/tenancy.metal3.io/v1alpha1/nothing/here/at/all' });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('404 page not found\n');
  });

  it('serves aggregated discovery v2 with its media type, ETag and 304', async () => {
    const accept = `${discoveryV2ContentType},application/json`;
    const first = await request({ ...admin(), path: '/apis', headers: { ...asAdmin, Accept: accept } });
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe(discoveryV2ContentType);
    expect(json(first)['kind']).toBe('APIGroupDiscoveryList');
    const etag = first.headers['etag'] as string;
    const second = await request({ ...admin(), path: '/apis', headers: { ...asAdmin, Accept: accept, 'If-None-Match': etag } });
    expect(second.status).toBe(304);
    const legacy = await request({ ...admin(), path: '/apis', headers: { ...asAdmin, Accept: 'application/json' } });
    expect(json(legacy)['kind']).toBe('APIGroupList');
  });

  it('answers 406 when only unsupported representations are acceptable', async () => {
    const res = await request({
      ...admin(),
      path: '/apis/tenancy.metal3.io/v1alpha1',
      headers: { ...asAdmin, Accept: 'application/vnd.kubernetes.protobuf' },
    });
    expect(res.status).toBe(406);
    expectStatus(json(res), 406, 'NotAcceptable', 'only the following media types are accepted: application/json');
  });

  it('never caches API responses in intermediaries', async () => {
    const res = await request({ ...admin(), path: '/apis/tenancy.metal3.io/v1alpha1' });
    expect(res.headers['cache-control']).toBe('no-cache, private');
    expect(res.headers['audit-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('request deadline stage', () => {
  const send = (path: string) => request({ port, path, caPem: servingCAPem, client: pki.frontProxyClient, headers: asAdmin });

  it("refuses a malformed timeout parameter with kube's 400 and Go's duration error", async () => {
    const res = await send('/whoami?timeout=abc');
    expect(res.status).toBe(400);
    expectStatus(json(res), 400, 'BadRequest', 'invalid timeout specified in the request URL - time: invalid duration "abc"');
  });

  it('answers 504 Timeout at the requested deadline and drops what the handler writes later', async () => {
    const started = Date.now();
    const res = await send('/slow?delay=600&timeout=200ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(res.status).toBe(504);
    expect(json(res)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: request did not complete within the allotted timeout',
      reason: 'Timeout',
      details: {},
      code: 504,
    });
    // The handler's late answer went nowhere, and the server goes on answering.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await send('/whoami')).status).toBe(200);
  });

  it('keeps the server maximum for timeout=0s or a negative timeout, as kube does', async () => {
    expect((await send('/slow?delay=300&timeout=0s')).status).toBe(200);
    expect((await send('/slow?delay=300&timeout=-1s')).status).toBe(200);
  });

  it('cuts an answer that had started when the deadline passed', async () => {
    await expect(send('/slow-stream?timeout=200ms')).rejects.toThrow();
  });

  it('leaves watches alone', async () => {
    const res = await request({
      port,
      path: '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims?watch=true&timeout=100ms',
      caPem: servingCAPem,
      client: pki.frontProxyClient,
      headers: { 'X-Remote-User': 'tenant-a' },
    });
    expect(res.status).toBe(200);
  });
});

describe('an answer sent before the request body was read', () => {
  it('says Connection: close, as net/http does, so the client does not reuse a connection about to close', async () => {
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/refuse-unread',
          method: 'POST',
          ca: servingCAPem,
          servername: 'localhost',
          cert: pki.frontProxyClient.certPem,
          key: pki.frontProxyClient.keyPem,
          agent: false,
          headers: { ...asAdmin, 'Content-Type': 'application/json', 'Content-Length': String(4 << 20) },
        },
        (res) => {
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
          res.resume();
          req.destroy();
        },
      );
      req.on('error', reject);
      // A quarter of the announced body: the server answers before the rest arrives.
      req.write(Buffer.alloc(1 << 20, 0x20));
    });
    expect(answer).toEqual({ status: 403, connection: 'close' });
  });

  it('goes on reading what the client still sends for a moment before closing, as net/http (closeWriteAndWait), so the answer is not lost to a reset', async () => {
    const chunk = Buffer.alloc(64 << 10, 0x20);
    // Half-open, as Go's client: the server's FIN does not end what the client sends.
    const raw = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    const socket = tls.connect({ socket: raw, ca: servingCAPem, servername: 'localhost', cert: pki.frontProxyClient.certPem, key: pki.frontProxyClient.keyPem });
    const failures: string[] = [];
    socket.on('error', (error: Error) => {
      failures.push(error.message);
    });
    await once(socket, 'secureConnect');
    const headers = Object.entries({ ...asAdmin, 'Content-Type': 'application/json', 'Content-Length': String(16 * chunk.length) }).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`POST /refuse-unread HTTP/1.1\r\nHost: localhost\r\n${headers.join('')}\r\n`);
    for (let i = 0; i < 4; i++) socket.write(chunk);
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    await vi.waitFor(
      () => {
        expect(answer).toContain('"refused":true');
      },
      { timeout: 3000 },
    );
    // Go's proxy goes on writing the body after the answer came, and reports a failed write (503) rather than the answer.
    for (let i = 0; i < 12; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      socket.write(chunk);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(failures).toEqual([]);
    expect(answer).toMatch(/^HTTP\/1\.1 403 [^]*\r\nConnection: close\r\n/);
    // The server half-closed after its answer (and closes after rstAvoidanceDelay).
    expect(socket.readableEnded).toBe(true);
    socket.destroy();
  });

  it('keeps the connection of an answer to a request read whole', async () => {
    const agent = new https.Agent({ keepAlive: true });
    const connection = await new Promise<string | undefined>((resolve, reject) => {
      https
        .request(
          { host: '127.0.0.1', port, path: '/refuse-unread', method: 'POST', ca: servingCAPem, servername: 'localhost', cert: pki.frontProxyClient.certPem, key: pki.frontProxyClient.keyPem, agent, headers: { ...asAdmin, 'Content-Type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.headers.connection);
          },
        )
        .on('error', reject)
        .end('{}');
    });
    agent.destroy();
    expect(connection).toBe('keep-alive');
  });
});
