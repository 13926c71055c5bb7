import { once } from 'node:events';
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueCertificate, type CertificateAuthority } from '../../../src/pki/certificates.js';
import { bodySliceBytes, writeSerialized } from '../../../src/api/respond.js';

/**
 * The sizes of the writes a TLS socket is handed: each one sizes the
 * socket's encrypted-output buffer, which the socket keeps while it lives.
 */
interface SocketWrites {
  readonly sizes: number[];
}

type WriteGeneric = (writev: boolean, data: unknown, encoding: string, callback: (error?: Error | null) => void) => void;

function recordWrites(socket: Socket): SocketWrites {
  const writes: SocketWrites = { sizes: [] };
  const target = socket as unknown as { _writeGeneric: WriteGeneric };
  const original = target._writeGeneric.bind(socket);
  target._writeGeneric = (writev, data, encoding, callback) => {
    writes.sizes.push(writev ? (data as ({ chunk: Buffer | string } | Buffer)[]).reduce((sum, entry) => sum + Buffer.byteLength(Buffer.isBuffer(entry) ? entry : entry.chunk), 0) : Buffer.byteLength(data as Buffer | string));
    original(writev, data, encoding, callback);
  };
  return writes;
}

let ca: CertificateAuthority;
let server: https.Server;
let port: number;
let respond: (res: ServerResponse, socketWrites: SocketWrites) => void = () => undefined;
let lastWrites: SocketWrites = { sizes: [] };
let lastResponse: ServerResponse | undefined;

beforeAll(async () => {
  ca = await createCertificateAuthority('ca');
  const serving = await issueCertificate(ca, { commonName: 'localhost', ipAddresses: ['127.0.0.1'], usage: 'server' });
  server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    lastWrites = recordWrites(req.socket);
    lastResponse = res;
    respond(res, lastWrites);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.close();
  await once(server, 'close');
});

function get(method = 'GET'): Promise<{ status: number; length: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, method, path: '/', ca: ca.certPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, length: res.headers['content-length'], body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A body no JSON encoder would compress away: every byte position differs. */
function bodyOf(size: number): Buffer {
  const body = Buffer.alloc(size);
  for (let i = 0; i < size; i++) body[i] = 32 + (i % 95);
  return body;
}

// Room for the status line and headers, which Node sends together with the first slice.
const headerRoom = 1024;

describe('writeSerialized', () => {
  it('hands the TLS socket a large body in slices, never in one write, and the client gets every byte', async () => {
    const body = bodyOf(1024 * 1024 + 17);
    respond = (res) => {
      writeSerialized(res, 200, body, 'application/json');
    };
    const answer = await get();
    expect(answer.status).toBe(200);
    expect(answer.length).toBe(String(body.length));
    expect(answer.body.equals(body)).toBe(true);
    expect(Math.max(...lastWrites.sizes)).toBeLessThanOrEqual(bodySliceBytes + headerRoom);
    expect(lastWrites.sizes.length).toBeGreaterThanOrEqual(Math.ceil(body.length / bodySliceBytes));
  });

  it('is measured by the write recorder: the same body ended at once reaches the socket as one write', async () => {
    const body = bodyOf(1024 * 1024);
    respond = (res) => {
      res.setHeader('Content-Length', body.length);
      res.end(body);
    };
    const answer = await get();
    expect(answer.body.equals(body)).toBe(true);
    expect(Math.max(...lastWrites.sizes)).toBeGreaterThan(body.length);
  });

  it('writes a small body in one write, and a string body as its UTF-8 bytes', async () => {
    respond = (res) => {
      writeSerialized(res, 201, '{"name":"ü"}', 'application/json');
    };
    const answer = await get();
    expect(answer.status).toBe(201);
    expect(answer.body.toString('utf8')).toBe('{"name":"ü"}');
    expect(answer.length).toBe('13');
    expect(lastWrites.sizes).toHaveLength(1);
  });

  it('answers HEAD with the length and no body', async () => {
    const body = bodyOf(100 * 1024);
    respond = (res) => {
      writeSerialized(res, 200, body, 'application/json');
    };
    const answer = await get('HEAD');
    expect(answer.status).toBe(200);
    expect(answer.length).toBe(String(body.length));
    expect(answer.body).toHaveLength(0);
  });

  it('stops writing when the client goes away mid-body, without an error', async () => {
    const body = bodyOf(32 * 1024 * 1024);
    respond = (res) => {
      writeSerialized(res, 200, body, 'application/json');
    };
    const closed = new Promise<void>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port, path: '/', ca: ca.certPem, agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
        });
      });
      req.on('close', resolve);
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ECONNRESET') reject(error);
      });
      req.end();
    });
    await closed;
    const response = lastResponse;
    if (response === undefined) throw new Error('no response');
    if (!response.destroyed) await once(response, 'close');
    expect(response.writableFinished).toBe(false);
    const written = lastWrites.sizes.reduce((sum, size) => sum + size, 0);
    expect(written).toBeLessThan(body.length);
  });
});
