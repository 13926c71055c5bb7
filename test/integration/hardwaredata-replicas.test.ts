/**
 * HardwareData resourceVersions every replica agrees on (issue #12, item 4):
 * two server replicas, a tenant's HardwareData watch on the first cut in the
 * middle of a stream of changes — host labels, a HostDeployPolicy, the
 * tenant namespace's labels, a host taken and given back — and resumed on
 * the second from the last resourceVersion it received. The resumed
 * watch's final state must equal a fresh list (names, resourceVersions and
 * content), and both replicas must list the same objects at the same
 * resourceVersions. A resume may repeat changes (they share resourceVersions
 * when one input change changes several objects), never miss one.
 *
 * Requests go straight to each replica as the aggregator would send them
 * (front-proxy client certificate, X-Remote-User tenant-a): the aggregator
 * itself balances over a Service, which a test cannot steer.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevEnvironment, SERVICE_DNS_NAME, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';
import { json, request } from '../support/https-client.js';

const binDir = inject('controlPlaneBinDir');
const bmoModule = 'github.com/metal3-io/baremetal-operator@v0.13.2';
const crds = ['metal3.io_baremetalhosts.yaml', 'metal3.io_hostdeploypolicies.yaml'];
const collection = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hardwaredata';
const hosts = ['h-0', 'h-1', 'h-2', 'h-3'];

interface HardwareData {
  metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: unknown;
}

interface WatchLine {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: HardwareData;
}

let env: DevEnvironment;
let frontProxy: { certPem: string; keyPem: string };
let ports: { first: number; second: number };

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `hardwaredata-replicas-${process.pid}`), serverEntry: 'dist/src/main.js', binDir });
  frontProxy = {
    certPem: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.crt'), 'utf8'),
    keyPem: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.key'), 'utf8'),
  };
  const modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const files = crds.map((crd) => path.join(modCache, bmoModule, 'config', 'base', 'crds', 'bases', crd));
  for (const file of files) await env.controlPlane.applyFile(file);
  await admin(['wait', '--for=condition=Established', '--timeout=60s', ...files.flatMap((f) => ['-f', f])]);
  for (const host of hosts) await createHost(host, { rack: 'r1' });
  await applyPolicy('for-tenant-a', { names: ['tenant-a'] });
  await env.startReplica();
  ports = { first: env.serverPort, second: Number(new URL(env.replicaUrls[0] ?? '').port) };
}, 300_000);

afterAll(async () => {
  await env.stop();
});

async function admin(args: string[]): Promise<string> {
  const result = await env.controlPlane.kubectl(args, { kubeconfig: env.adminKubeconfigPath });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

async function createHost(name: string, labels: Record<string, string>): Promise<void> {
  await env.controlPlane.apply(
    JSON.stringify({ apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name, namespace: 'infra', labels }, spec: { online: false, bootMACAddress: '00:11:22:33:44:55' } }),
  );
  const status = { operationalStatus: 'OK', errorCount: 0, errorMessage: '', poweredOn: false, provisioning: { state: 'available', ID: '' }, hardware: { ramMebibytes: 4096, cpu: { arch: 'x86_64', count: 4 }, hostname: name } };
  await admin(['-n', 'infra', 'patch', 'baremetalhost', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
}

async function applyPolicy(name: string, hostClaimNamespaces: Record<string, unknown>, sharedLabels?: string): Promise<void> {
  await env.controlPlane.apply(
    JSON.stringify({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HostDeployPolicy',
      metadata: { name, namespace: 'infra', ...(sharedLabels === undefined ? {} : { annotations: { 'tenancy.metal3.io/shared-labels': sharedLabels } }) },
      spec: { hostClaimNamespaces },
    }),
  );
}

const asTenant = { 'X-Remote-User': 'tenant-a', 'X-Remote-Group': 'system:authenticated' };

function get(port: number) {
  return request({ port, path: collection, headers: asTenant, caPem: env.aggregatedServerCaPem, servername: SERVICE_DNS_NAME, client: frontProxy });
}

async function list(port: number): Promise<{ resourceVersion: string; items: HardwareData[] }> {
  const response = await get(port);
  expect(response.status, response.body).toBe(200);
  const body = json(response) as { metadata: { resourceVersion: string }; items: HardwareData[] };
  return { resourceVersion: body.metadata.resourceVersion, items: body.items };
}

/** A raw watch on one replica, applying its events to `state`; `lastResourceVersion` is where a client would resume. */
class RawWatch {
  lastResourceVersion: string;
  readonly events: string[] = [];
  readonly errors: string[] = [];
  private readonly req: ReturnType<typeof https.request>;

  constructor(port: number, from: string, readonly state: Map<string, HardwareData>) {
    this.lastResourceVersion = from;
    let buffered = '';
    this.req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: `${collection}?watch=1&allowWatchBookmarks=true&resourceVersion=${from}`,
        headers: asTenant,
        ca: env.aggregatedServerCaPem,
        servername: SERVICE_DNS_NAME,
        cert: frontProxy.certPem,
        key: frontProxy.keyPem,
        agent: false,
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let newline = buffered.indexOf('\n');
          while (newline >= 0) {
            this.apply(JSON.parse(buffered.slice(0, newline)) as WatchLine);
            buffered = buffered.slice(newline + 1);
            newline = buffered.indexOf('\n');
          }
        });
      },
    );
    this.req.on('error', () => undefined);
    this.req.end();
  }

  cut(): void {
    this.req.destroy();
  }

  private apply(event: WatchLine): void {
    if (event.type === 'ERROR') {
      this.errors.push(JSON.stringify(event.object));
      return;
    }
    this.lastResourceVersion = event.object.metadata.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    this.events.push(`${event.type} ${event.object.metadata.name}@${event.object.metadata.resourceVersion}`);
    if (event.type === 'DELETED') this.state.delete(event.object.metadata.name);
    else this.state.set(event.object.metadata.name, event.object);
  }
}

/** name@resourceVersion plus content, sorted: what "the same state" means. */
function summary(objects: Iterable<HardwareData>): string[] {
  return [...objects].map((o) => `${o.metadata.name}@${o.metadata.resourceVersion} ${JSON.stringify([o.metadata.labels ?? {}, o.metadata.annotations ?? {}, o.spec])}`).sort();
}

describe('a HardwareData watch cut on one replica and resumed on another', () => {
  it('ends in the state a fresh list shows, on both replicas, with the same resourceVersions', async () => {
    // Each replica picks the metal3.io CRDs up within its informers' backoff (up to 30 s).
    const names = hosts.map((h) => `infra.${h}`);
    for (const port of [ports.second, ports.first]) {
      // 429 while the replica's HardwareData cache initializes, as kube's watch cache answers.
      await pollUntil(`replica on ${port} to list the hosts`, async () => {
        const response = await get(port);
        const listed = response.status === 200 ? (json(response) as { items: HardwareData[] }).items.map((i) => i.metadata.name) : [];
        return JSON.stringify(listed) === JSON.stringify(names) ? true : undefined;
      }, {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
    }
    const initial = await list(ports.first);
    expect(initial.items.map((i) => i.metadata.name)).toEqual(names);
    const state = new Map(initial.items.map((item) => [item.metadata.name, item]));
    const first = new RawWatch(ports.first, initial.resourceVersion, state);

    // Changes of every input while the first watch runs.
    await admin(['-n', 'infra', 'label', 'baremetalhost', 'h-0', 'rack=r2', '--overwrite']);
    await applyPolicy('for-tenant-a', { names: ['tenant-a'] }, 'rack');
    await pollUntil('the first watch to see the shared labels', () => Promise.resolve(state.get('infra.h-0')?.metadata.labels?.['rack'] === 'r2' ? true : undefined), {
      timeoutMs: 30_000,
      describeFailure: () => first.events.join('\n'),
    });
    await admin(['label', 'namespace', 'tenant-a', 'team=blue']);
    await admin(['-n', 'infra', 'patch', 'baremetalhost', 'h-1', '--type=merge', '-p', JSON.stringify({ spec: { consumerRef: { kind: 'Metal3Machine', name: 'm-1', namespace: 'tenant-b' } } })]);
    await pollUntil('the first watch to see h-1 taken', () => Promise.resolve(state.has('infra.h-1') ? undefined : true), {
      timeoutMs: 30_000,
      describeFailure: () => first.events.join('\n'),
    });
    first.cut();
    const resumeFrom = first.lastResourceVersion;

    // Changes while no watch runs, then resumed on the other replica.
    await admin(['-n', 'infra', 'label', 'baremetalhost', 'h-2', 'rack=r3', '--overwrite']);
    await applyPolicy('for-blue', { hasLabels: [{ name: 'team', value: 'blue' }] }, 'rack|team');
    await admin(['-n', 'infra', 'patch', 'baremetalhost', 'h-1', '--type=json', '-p', '[{"op":"remove","path":"/spec/consumerRef"}]']);
    const second = new RawWatch(ports.second, resumeFrom, state);
    await admin(['label', 'namespace', 'tenant-a', 'team-']);
    await admin(['-n', 'infra', 'delete', 'hostdeploypolicy', 'for-blue']);
    await admin(['-n', 'infra', 'label', 'baremetalhost', 'h-3', 'rack=r4', '--overwrite']);

    let fresh: string[] = [];
    await pollUntil(
      'the resumed watch to end in the state of a fresh list',
      async () => {
        fresh = summary((await list(ports.second)).items);
        return JSON.stringify(summary(state.values())) === JSON.stringify(fresh) && fresh.some((s) => s.startsWith('infra.h-3@') && s.includes('"rack":"r4"')) ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, describeFailure: () => `watch: ${JSON.stringify(summary(state.values()))}\nlist: ${JSON.stringify(fresh)}\nevents: ${second.events.join(', ')}` },
    );
    second.cut();
    expect(second.errors).toEqual([]);
    expect(summary((await list(ports.first)).items)).toEqual(fresh);
    expect(fresh.map((s) => s.split('@')[0])).toEqual(hosts.map((h) => `infra.${h}`));
  });
});
