/**
 * Raw HTTP clients for hostile-input tests: the path is sent exactly as
 * given (no dot-segment resolution, no re-encoding, unlike kubectl and
 * curl without --path-as-is), with any method, headers and body.
 *
 * - `viaAggregator`: to kube-apiserver as a user of the environment (client
 *   certificate from the user's kubeconfig), so kube authenticates,
 *   authorizes and proxies as in production.
 * - `direct`: to hostclaim-apiserver's own port with the front-proxy client
 *   certificate and X-Remote-* headers, as the aggregator would send.
 * - `directToKube`: the same front-proxy request to kube-apiserver, which
 *   trusts that certificate too: kube's answer for the direct path.
 * - `directConnection`: what `direct` connects with, for a client of its own.
 */
import { readFile } from 'node:fs/promises';
import type { OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { DevEnvironment } from '../controlplane/environment.js';

export interface RawRequest {
  readonly method?: string;
  /** Sent as is, query included. */
  readonly path: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Buffer;
  readonly timeoutMs?: number;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

export interface Identity {
  readonly user: string;
  readonly groups?: readonly string[];
}

export interface RawClients {
  viaAggregator(kubeconfigPath: string, request: RawRequest): Promise<RawResponse>;
  direct(identity: Identity, request: RawRequest): Promise<RawResponse>;
  directToKube(identity: Identity, request: RawRequest): Promise<RawResponse>;
  directConnection(identity: Identity): DirectConnection;
}

/** The server's port, the front-proxy client certificate and the identity's X-Remote-* headers. */
export interface DirectConnection {
  readonly host: string;
  readonly port: number;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly servername: string;
  readonly headers: Readonly<Record<string, string | string[]>>;
}

interface TlsCredentials {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

interface KubeconfigFile {
  clusters: { cluster: { 'certificate-authority-data'?: string } }[];
  users: { user: { 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
}

export async function credentialsOf(kubeconfigPath: string): Promise<TlsCredentials> {
  const config = parseYaml(await readFile(kubeconfigPath, 'utf8')) as KubeconfigFile;
  const decode = (data: string | undefined): string => {
    if (data === undefined) throw new Error(`${kubeconfigPath}: missing inline credentials`);
    return Buffer.from(data, 'base64').toString('utf8');
  };
  return {
    ca: decode(config.clusters[0]?.cluster['certificate-authority-data']),
    cert: decode(config.users[0]?.user['client-certificate-data']),
    key: decode(config.users[0]?.user['client-key-data']),
  };
}

/** `serverUrl`: the server `direct` talks to (default the environment's; a replica's from env.replicaUrls). */
export async function rawClients(env: DevEnvironment, serverUrlText: string = env.serverUrl): Promise<RawClients> {
  const server = new URL(env.controlPlane.server);
  const serverUrl = new URL(serverUrlText);
  const frontProxy = {
    cert: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.crt'), 'utf8'),
    key: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.key'), 'utf8'),
  };
  const users = new Map<string, TlsCredentials>();
  const credentials = async (kubeconfigPath: string): Promise<TlsCredentials> => {
    let found = users.get(kubeconfigPath);
    if (found === undefined) {
      found = await credentialsOf(kubeconfigPath);
      users.set(kubeconfigPath, found);
    }
    return found;
  };
  const directTarget = { host: serverUrl.hostname, port: Number(serverUrl.port), ca: env.aggregatedServerCaPem, cert: frontProxy.cert, key: frontProxy.key, servername: 'localhost' };
  return {
    async viaAggregator(kubeconfigPath, request) {
      const { ca, cert, key } = await credentials(kubeconfigPath);
      return send({ host: server.hostname, port: Number(server.port), ca, cert, key }, request);
    },
    direct(identity, request) {
      return send(directTarget, { ...request, headers: frontProxyHeaders(identity, request) });
    },
    directConnection(identity) {
      return { ...directTarget, headers: identityHeaders(identity) };
    },
    async directToKube(identity, request) {
      const { ca } = await credentials(env.adminKubeconfigPath);
      return send({ host: server.hostname, port: Number(server.port), ca, cert: frontProxy.cert, key: frontProxy.key }, { ...request, headers: frontProxyHeaders(identity, request) });
    },
  };
}

/** The identity as the aggregator asserts it; the request's own headers win (hostile-input tests forge them). */
function frontProxyHeaders(identity: Identity, request: RawRequest): OutgoingHttpHeaders {
  return { ...identityHeaders(identity), ...request.headers };
}

function identityHeaders(identity: Identity): Record<string, string | string[]> {
  return { 'X-Remote-User': identity.user, 'X-Remote-Group': [...(identity.groups ?? []), 'system:authenticated'] };
}

/** Where `send` connects, with which trust and client certificate (none: omit cert and key). */
export interface Target {
  readonly host: string;
  readonly port: number;
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
  readonly servername?: string;
}

export function send(target: Target, request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body = request.body;
    const req = https.request(
      {
        host: target.host,
        port: target.port,
        path: request.path,
        method: request.method ?? 'GET',
        ca: target.ca,
        ...(target.cert === undefined ? {} : { cert: target.cert, key: target.key }),
        ...(target.servername === undefined ? {} : { servername: target.servername }),
        agent: false,
        timeout: request.timeoutMs ?? 30_000,
        headers: {
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Length': Buffer.byteLength(body) }),
          ...request.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: parseOrUndefined(text) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${request.method ?? 'GET'} ${request.path}: no answer within ${request.timeoutMs ?? 30_000} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
