import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound, KubeApiError, KubeClient, KubeUnavailableError } from '../../../src/backing/kube-client.js';
import { createCertificateAuthority, issueCertificate, type CertificateAuthority } from '../../../src/pki/certificates.js';

/** A loopback HTTPS server that records each request's Accept header and answers a list, or a watch that ends at once. */
let server: https.Server;
let dir: string;
let client: KubeClient;
let ca: CertificateAuthority;
let serving: { certPem: string; keyPem: string };
const seen: { url: string; accept: string | undefined; userAgent: string | undefined }[] = [];

beforeAll(async () => {
  ca = await createCertificateAuthority('ca');
  serving = await issueCertificate(ca, { commonName: 'localhost', ipAddresses: ['127.0.0.1'], usage: 'server' });
  server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    seen.push({ url: req.url ?? '', accept: req.headers.accept, userAgent: req.headers['user-agent'] });
    // As kube-apiserver answers a protobuf-first Accept: the list, or a missing collection's Status, in protobuf.
    if (req.url?.startsWith('/pb/') === true) {
      const missing = req.url.startsWith('/pb/missing');
      res.writeHead(missing ? 404 : 200, { 'Content-Type': 'application/vnd.kubernetes.protobuf' });
      res.end(readFileSync(new URL(`fixtures/${missing ? 'status-404.pb' : 'bmh-metadata-list.pb'}`, import.meta.url)));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(req.url?.includes('watch=true') === true ? '' : '{"metadata":{"resourceVersion":"1"},"items":null}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  dir = await mkdtemp(join(tmpdir(), 'kube-client-'));
  client = await clientFor(port);
});

/** A client of https://127.0.0.1:<port> trusting the test CA. */
async function clientFor(port: number): Promise<KubeClient> {
  const kubeconfig = join(dir, `kubeconfig-${port}`);
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return KubeClient.load(kubeconfig);
}

afterAll(async () => {
  client.close();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function acceptOf(call: () => Promise<unknown>): Promise<string | undefined> {
  seen.length = 0;
  await call();
  expect(seen).toHaveLength(1);
  return seen[0]?.accept;
}

describe('KubeClient Accept headers (client-go metadata client: a list kind for lists, an object kind for watches)', () => {
  it('asks for PartialObjectMetadataList on a metadata-only list', async () => {
    expect(await acceptOf(() => client.list('/api/v1/secrets', {}, 'metadata'))).toBe('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1');
  });

  it('asks for a meta.k8s.io Table on a table list, passing includeObject through', async () => {
    expect(await acceptOf(() => client.list('/apis/g/v1/things', { includeObject: 'None' }, 'table'))).toBe('application/json;as=Table;g=meta.k8s.io;v=v1');
    expect(seen[0]?.url).toBe('/apis/g/v1/things?includeObject=None');
  });

  it('asks for PartialObjectMetadata, never a list kind, on a metadata-only watch', async () => {
    expect(await acceptOf(() => client.watch('/api/v1/secrets', {}, () => undefined, { representation: 'metadata' }))).toBe('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1');
  });

  it('asks for plain JSON on full lists, watches and other requests', async () => {
    expect(await acceptOf(() => client.list('/api/v1/namespaces', {}, 'full'))).toBe('application/json');
    expect(await acceptOf(() => client.watch('/api/v1/namespaces', {}, () => undefined))).toBe('application/json');
    expect(await acceptOf(() => client.get('/api/v1/namespaces'))).toBe('application/json');
  });
});

describe('KubeClient.listVersions (a fence\'s probe of a whole collection)', () => {
  it('asks for a PartialObjectMetadataList in protobuf first, in JSON after, and reads the protobuf answer', async () => {
    const before = seen.length;
    expect(await client.listVersions('/pb/apis/metal3.io/v1alpha1/baremetalhosts', { labelSelector: 'a=b' })).toEqual({
      resourceVersion: '69678',
      items: [
        { namespace: 'bench-infra-00', name: 'host-00000', resourceVersion: '538' },
        { namespace: 'bench-infra-00', name: 'host-00001', resourceVersion: '543' },
      ],
    });
    expect(seen[before]).toMatchObject({
      url: '/pb/apis/metal3.io/v1alpha1/baremetalhosts?labelSelector=a%3Db',
      accept: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    });
  });

  it('reads the JSON answer of a server that offers no protobuf', async () => {
    expect(await client.listVersions('/apis/g/v1/things', {})).toEqual({ resourceVersion: '1', items: [] });
  });

  it('fails with the Status kube-apiserver sent in protobuf', async () => {
    const error = await client.listVersions('/pb/missing', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(isNotFound(error)).toBe(true);
    expect((error as KubeApiError).message).toContain('namespaces "nowhere" not found');
  });
});

describe('KubeClient User-Agent', () => {
  it("names the server as client-go does, so kube-apiserver's field manager of its writes is hostclaim-apiserver", async () => {
    await acceptOf(() => client.get('/api/v1/namespaces'));
    expect(seen[0]?.userAgent).toMatch(/^hostclaim-apiserver\/v\d+\.\d+\.\d+\S* \((linux|darwin)\/(amd64|arm64)\)$/);
  });
});

describe('KubeClient request paths', () => {
  it('refuses a path the URL parser would rewrite, and sends nothing', async () => {
    seen.length = 0;
    for (const path of [
      '/api/v1/namespaces/tenant-a/secrets/../../tenant-b/secrets/x',
      '/api/v1/namespaces/tenant-a/secrets/%2e%2e/%2E%2E/tenant-b/secrets/x',
      '/api/v1/namespaces/tenant-a/secrets/./x',
    ]) {
      await expect(client.get(path)).rejects.toThrow(`refusing a request path that does not stay as built: ${JSON.stringify(path)}`);
    }
    expect(seen).toEqual([]);
  });

  it('sends a path that stays as built, encoded segments and query included', async () => {
    seen.length = 0;
    await client.get('/api/v1/namespaces/tenant-a/secrets/a%2Fb?x=1');
    expect(seen.map((request) => request.url)).toEqual(['/api/v1/namespaces/tenant-a/secrets/a%2Fb?x=1']);
  });
});

describe('KubeClient when kube-apiserver does not answer', () => {
  it('rejects with KubeUnavailableError (not timed out) when nothing listens', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const unreachable = await clientFor(port);
    try {
      const error = await unreachable.get('/api/v1/namespaces').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeUnavailableError);
      expect((error as KubeUnavailableError).timedOut).toBe(false);
    } finally {
      unreachable.close();
    }
  });

  it('rejects with a timed-out KubeUnavailableError when kube-apiserver accepts but stays silent past the call timeout', async () => {
    const silent = https.createServer({ cert: serving.certPem, key: serving.keyPem }, () => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const hanging = await clientFor((silent.address() as AddressInfo).port);
    try {
      const startedAt = Date.now();
      const error = await hanging.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeUnavailableError);
      expect((error as KubeUnavailableError).timedOut).toBe(true);
      expect(Date.now() - startedAt).toBeLessThan(5000);
    } finally {
      hanging.close();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('KubeClient on a pooled connection kube-apiserver closed as idle', () => {
  /**
   * Answers the first request on each connection and drops the connection
   * unanswered when a second arrives on it: what a client sees when the
   * server's idle timeout closes the connection as the request goes out.
   */
  async function closingAfterOneAnswer(): Promise<{ server: https.Server; requests: { connection: number; method: string }[] }> {
    const requests: { connection: number; method: string }[] = [];
    const served = new WeakMap<object, number>();
    let connections = 0;
    const server = https.createServer({ cert: serving.certPem, key: serving.keyPem, keepAliveTimeout: 60_000 }, (req, res) => {
      const socket = req.socket;
      const connection = served.get(socket) ?? ++connections;
      requests.push({ connection, method: req.method ?? '' });
      if (served.has(socket)) {
        socket.destroy();
        return;
      }
      served.set(socket, connection);
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, requests };
  }

  async function withClosingServer(body: (client: KubeClient, requests: { connection: number; method: string }[]) => Promise<void>): Promise<void> {
    const { server, requests } = await closingAfterOneAnswer();
    const pooled = await clientFor((server.address() as AddressInfo).port);
    try {
      await body(pooled, requests);
    } finally {
      pooled.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('sends a GET once more on a new connection, as client-go retries a GET on a reset', async () => {
    await withClosingServer(async (pooled, requests) => {
      await pooled.get('/api/v1/namespaces');
      await expect(pooled.get('/api/v1/namespaces')).resolves.toEqual({});
      expect(requests).toEqual([
        { connection: 1, method: 'GET' },
        { connection: 1, method: 'GET' },
        { connection: 2, method: 'GET' },
      ]);
    });
  });

  it('sends an idempotent review once more, but never a write: a lost write cannot be told from a lost answer', async () => {
    await withClosingServer(async (pooled, requests) => {
      await pooled.get('/api/v1/namespaces');
      await expect(pooled.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, { idempotent: true })).resolves.toEqual({});
      await pooled.get('/api/v1/namespaces');
      const error = await pooled.create('/api/v1/namespaces/a/configmaps', {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeUnavailableError);
      expect((error as KubeUnavailableError).timedOut).toBe(false);
      expect(requests.map((request) => `${request.connection} ${request.method}`)).toEqual(['1 GET', '1 POST', '2 POST', '2 GET', '3 GET', '3 POST']);
    });
  });
});

describe('isNotFound', () => {
  it("is a NotFound Status only: Go's plain `404 page not found` (a path not served, e.g. while kube-apiserver starts) says nothing about the object", () => {
    expect(isNotFound(new KubeApiError(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'secrets "x" not found' }))).toBe(true);
    expect(isNotFound(new KubeApiError(404, undefined))).toBe(false);
    expect(isNotFound(new KubeUnavailableError(false, { cause: new Error('ECONNREFUSED') }))).toBe(false);
  });
});
