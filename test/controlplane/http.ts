// Minimal HTTPS client for the harness: readiness probes and the handful of
// API calls (ServiceAccounts, TokenRequest, APIService status) it makes itself.
import https from 'node:https';
import tls from 'node:tls';

export interface TlsIdentity {
  /** CA bundle used to verify the server; omit only for probes that check liveness, not identity. */
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  /** TLS server name to verify instead of the URL's host. */
  serverName?: string;
}

export interface HttpResponse {
  status: number;
  body: string;
}

export interface RequestOptions extends TlsIdentity {
  method?: string;
  body?: unknown;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export function httpsRequest(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const request = https.request(
      url,
      {
        method: options.method ?? 'GET',
        // One connection per request: no idle keep-alive sockets outliving the servers.
        agent: false,
        ca: options.caPem,
        cert: options.certPem,
        key: options.keyPem,
        servername: options.serverName,
        rejectUnauthorized: options.caPem !== undefined,
        timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        headers: {
          Accept: 'application/json',
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`request to ${url} timed out`)));
    request.on('error', reject);
    request.end(payload);
  });
}

/** Resolves true when `url` answers 200, false on any other status or connection error. */
export async function isHealthy(url: string, identity: TlsIdentity = {}): Promise<boolean> {
  try {
    return (await httpsRequest(url, { ...identity, timeoutMs: 2_000 })).status === 200;
  } catch {
    return false;
  }
}

/** SHA-256 fingerprint (Node's colon-separated format) of the certificate a TLS server presents. */
export function servedCertificateFingerprint(host: string, port: number, serverName: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // Identity is compared by fingerprint, so chain verification is not needed here.
    const socket = tls.connect({ host, port, servername: serverName, rejectUnauthorized: false }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.destroy();
      resolve(fingerprint);
    });
    socket.setTimeout(2_000, () => socket.destroy(new Error(`TLS handshake with ${host}:${port} timed out`)));
    socket.once('error', reject);
  });
}
