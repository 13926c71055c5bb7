/** A minimal HTTPS client for tests that need exact control of TLS credentials and headers. */
import https from 'node:https';
import type { OutgoingHttpHeaders } from 'node:http';
import { TLSSocket } from 'node:tls';

export interface TestRequest {
  readonly port: number;
  readonly path: string;
  readonly method?: string;
  /** Header values given as arrays are sent as separate header lines. */
  readonly headers?: OutgoingHttpHeaders;
  readonly caPem: string;
  readonly client?: { certPem: string; keyPem: string };
  readonly session?: Buffer;
  readonly servername?: string;
}

export interface TestResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly session: Buffer | undefined;
  readonly resumed: boolean;
}

export function request(options: TestRequest): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    const req = https.request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: options.path,
        method: options.method ?? 'GET',
        headers: options.headers,
        ca: options.caPem,
        servername: options.servername ?? 'localhost',
        ...(options.client === undefined ? {} : { cert: options.client.certPem, key: options.client.keyPem }),
        ...(options.session === undefined ? {} : { session: options.session }),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        // An answer cut before its end (the connection destroyed) fails the request.
        res.on('error', reject);
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const socket = res.socket;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            session,
            resumed: socket instanceof TLSSocket && socket.isSessionReused(),
          });
        });
      },
    );
    req.on('socket', (socket) => {
      if (!(socket instanceof TLSSocket)) throw new Error('expected a TLS socket');
      socket.on('session', (s: Buffer) => {
        session = s;
      });
    });
    req.on('error', reject);
    req.end();
  });
}

export function json(response: TestResponse): Record<string, unknown> {
  return JSON.parse(response.body) as Record<string, unknown>;
}
