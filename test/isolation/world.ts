/**
 * The isolation suite's environment: the real control plane and server
 * (binder on, baremetal-operator's CRDs without the operator), two tenants
 * with claims, Secrets and hosts of their own, and every way of reaching the
 * server a tenant could try. Every answer a tenant receives is kept for the
 * case that asked, so that the runner can scan it for infrastructure names.
 *
 *   namespace   holds
 *   tenant-a    claims alpha-one..three (app=alpha), Secret alpha-userdata,
 *               users tenant-a (admin), claimer-a (claims only, no Secrets),
 *               ServiceAccount robot (admin)
 *   tenant-b    claims bravo-one, bravo-two (app=bravo), Secret bravo-userdata
 *   hosts-a     hosts host-a (role=worker-a), host-a2 (in error), host-a3 (role=worker-a3);
 *               its policy admits tenant-a
 *   hosts-b     host host-b (role=worker-b); its policy admits tenant-b
 *   hosts-shared host host-s (role=worker-s); its policy admits both
 */
import { readFile } from 'node:fs/promises';
import type { OutgoingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';
import { credentialsOf, rawClients, send, type RawClients, type RawResponse, type Target } from '../support/raw-http.js';
import { createHosts, createTenantObjects, GROUP_PATH } from './inventory.js';

export { GROUP_PATH };

/** Who sends: a user of a kubeconfig (through the aggregator) or an identity the front proxy asserts (direct). */
export type Actor = 'tenant-a' | 'tenant-b' | 'claimer-a' | 'admin';
export type Path = 'aggregator' | 'direct';

/** The tenant an actor belongs to (whose view must hold nothing of the other's), or undefined for admin. */
export function tenantOf(actor: Actor): 'tenant-a' | 'tenant-b' | undefined {
  if (actor === 'admin') return undefined;
  return actor === 'tenant-b' ? 'tenant-b' : 'tenant-a';
}

export interface Request {
  readonly method?: string;
  readonly path: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string;
}

/** One request a tenant sent and what it got back, kept for the leak scan. */
export interface Exchange {
  readonly viewer: 'tenant-a' | 'tenant-b';
  readonly request: string;
  readonly response: string;
}

export interface World {
  readonly env: DevEnvironment;
  /** As `actor`, through kube-apiserver's aggregator or directly to the server's port. */
  as(actor: Actor, via: Path, request: Request): Promise<RawResponse>;
  /** To the server's port (or kube-apiserver's) with the given TLS client certificate, or none. */
  tls(to: 'server' | 'kube', client: { cert: string; key: string } | undefined, request: Request, viewer?: 'tenant-a' | 'tenant-b'): Promise<RawResponse>;
  /** A tenant's client certificate (from its kubeconfig). */
  certificateOf(actor: Exclude<Actor, 'admin'> | 'front-proxy-named'): Promise<{ cert: string; key: string }>;
  /** The aggregator's front-proxy client certificate (what only kube-apiserver should hold). */
  frontProxyCertificate(): Promise<{ cert: string; key: string }>;
  /** A token of ServiceAccount tenant-a/robot, admin in tenant-a. */
  readonly robotToken: string;
  /** What tenants received since the last `takeExchanges()`. */
  takeExchanges(): Exchange[];
  /** Keeps a tenant-visible text that did not come through `as`/`tls` (a watch, kubectl output). */
  keep(exchange: Exchange): void;
  stop(): Promise<void>;
}

const identities: Record<Actor, { user: string; groups?: string[] }> = {
  'tenant-a': { user: 'tenant-a' },
  'tenant-b': { user: 'tenant-b' },
  'claimer-a': { user: 'claimer-a' },
  admin: { user: 'admin', groups: ['system:masters'] },
};

export async function startWorld(binDir: string): Promise<World> {
  const workDir = path.join(os.tmpdir(), `isolation-${process.pid}`);
  const env = await startDevEnvironment({ workDir, serverEntry: 'dist/src/main.js', binDir, bareMetalOperatorCrds: true, keepLogs: false });
  try {
    return await populate(env, workDir);
  } catch (error) {
    await env.stop();
    throw error;
  }
}

async function populate(env: DevEnvironment, workDir: string): Promise<World> {
  const cp = env.controlPlane;
  const extraKubeconfigs = {
    'claimer-a': await cp.userKubeconfig('claimer-a', [], path.join(workDir, 'claimer-a.kubeconfig'), { namespace: 'tenant-a' }),
    // A cluster client certificate whose CN is the front proxy's allowed name: not the front proxy.
    'front-proxy-named': await cp.userKubeconfig('front-proxy-client', [], path.join(workDir, 'front-proxy-named.kubeconfig')),
  };
  const kubeconfigs: Record<Exclude<Actor, 'admin'> | 'front-proxy-named', string> & { admin: string } = {
    ...env.tenantKubeconfigPaths,
    ...extraKubeconfigs,
    admin: env.adminKubeconfigPath,
  };
  await createHosts(env);
  const robotToken = await createTenantObjects(env);
  const raw: RawClients = await rawClients(env);
  await waitForSettledClaims(env);

  let exchanges: Exchange[] = [];
  const keep = (exchange: Exchange): void => {
    exchanges.push(exchange);
  };
  const record = (viewer: 'tenant-a' | 'tenant-b' | undefined, request: Request, response: RawResponse): RawResponse => {
    // Headers too: a Warning or any other header is as visible as the body.
    if (viewer !== undefined) keep({ viewer, request: describeRequest(request), response: `${JSON.stringify(response.headers)}\n${response.body}` });
    return response;
  };
  const kube = new URL(cp.server);
  const server = new URL(env.serverUrl);
  const kubeCa = (await credentialsOf(env.adminKubeconfigPath)).ca;
  return {
    env,
    robotToken,
    async as(actor, via, request) {
      const response =
        via === 'aggregator' ? await raw.viaAggregator(kubeconfigs[actor], request) : await raw.direct(identities[actor], request);
      return record(tenantOf(actor), request, response);
    },
    async tls(to, client, request, viewer) {
      const target: Target =
        to === 'server'
          ? { host: server.hostname, port: Number(server.port), ca: env.aggregatedServerCaPem, servername: 'localhost', ...client }
          : { host: kube.hostname, port: Number(kube.port), ca: kubeCa, ...client };
      return record(viewer, request, await send(target, request));
    },
    async certificateOf(actor) {
      const { cert, key } = await credentialsOf(kubeconfigs[actor]);
      return { cert, key };
    },
    async frontProxyCertificate() {
      return {
        cert: await readFile(path.join(cp.pkiDir, 'front-proxy-client.crt'), 'utf8'),
        key: await readFile(path.join(cp.pkiDir, 'front-proxy-client.key'), 'utf8'),
      };
    },
    takeExchanges() {
      const taken = exchanges;
      exchanges = [];
      return taken;
    },
    keep,
    stop: () => env.stop(),
  };
}

export function describeRequest(request: Request): string {
  const headers = Object.entries(request.headers ?? {})
    .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(' | ') : String(value)}`)
    .join('; ');
  return `${request.method ?? 'GET'} ${request.path}${headers === '' ? '' : ` [${headers}]`}${request.body === undefined ? '' : ` ${request.body}`}`;
}

/** The binder writes each new claim's first status; cases compare objects, so they start after it. */
async function waitForSettledClaims(env: DevEnvironment): Promise<void> {
  await pollUntil(
    'the binder to have written the status of every seeded claim',
    async () => {
      const list = await env.controlPlane.requestJson<{ items: { status?: { conditions?: unknown[] } }[] }>('GET', `${GROUP_PATH}/hostclaims`);
      return list.items.length === 5 && list.items.every((claim) => (claim.status?.conditions ?? []).length > 0) ? true : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 1000 },
  );
}
