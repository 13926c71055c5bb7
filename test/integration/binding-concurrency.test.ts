/**
 * Binding under contention and crashes: 200 claims against 100 matching
 * hosts, three server replicas, the binding leader killed with SIGKILL twice
 * while it binds. An invariant checker watches every BareMetalHost change
 * for the whole run: a host's consumerRef only ever goes from nothing to one
 * claim and back, and no claim ever holds two hosts. In the end exactly 100
 * claims are bound, and deleting bound claims lets the waiting ones bind.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KubeClient } from '../../src/backing/kube-client.js';
import { createBareMetalHost, waitForProvisioningState } from '../controlplane/baremetal-operator.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import type { ManagedProcess } from '../controlplane/processes.js';
import { pollUntil } from '../controlplane/wait.js';

const binDir = inject('controlPlaneBinDir');
const POOL = 'pool';
const HOSTS = 100;
const CLAIMS = 200;
const SETUP_TIMEOUT_MS = 20 * 60_000;
const claimsPath = '/apis/tenancy.metal3.io/v1alpha1/namespaces/tenant-a/hostclaims';
const hostsPath = `/apis/metal3.io/v1alpha1/namespaces/${POOL}/baremetalhosts`;

interface Host {
  metadata: { name: string; resourceVersion: string };
  spec: { consumerRef?: { uid?: string; name?: string } };
}

interface Claim {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[]; bareMetalHost?: { name: string } };
}

let env: DevEnvironment;
let admin: KubeClient;
let tenant: KubeClient;
const replicas: ManagedProcess[] = [];

beforeAll(async () => {
  env = await startDevEnvironment({
    workDir: path.join(os.tmpdir(), `binding-scale-${process.pid}`),
    serverEntry: 'dist/src/main.js',
    binDir,
    bareMetalOperator: true,
  });
  admin = await KubeClient.load(env.adminKubeconfigPath);
  tenant = await KubeClient.load(env.tenantKubeconfigPaths['tenant-a']);
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: POOL } });
  const names = Array.from({ length: HOSTS }, (_, i) => `node-${String(i).padStart(3, '0')}`);
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(names.slice(i, i + 20).map((name) => createBareMetalHost(env.controlPlane, { namespace: POOL, name, labels: { pool: 'scale' } })));
  }
  await Promise.all(names.map((name) => waitForProvisioningState(env.controlPlane, POOL, name, 'available', 10 * 60_000)));
  replicas.push(await env.startReplica(), await env.startReplica());
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  admin.close();
  tenant.close();
  await env.stop();
});

/** Watches every host change and records any violation of the binding invariants. */
class InvariantChecker {
  readonly violations: string[] = [];
  private readonly owner = new Map<string, string>();
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  async start(): Promise<void> {
    const list = await admin.get<{ metadata: { resourceVersion: string }; items: Host[] }>(hostsPath);
    for (const host of list.items) this.observe(host);
    this.done = admin
      .watch<Host>(hostsPath, { resourceVersion: list.metadata.resourceVersion, timeoutSeconds: '3600' }, ({ type, object }) => {
        if (type === 'ADDED' || type === 'MODIFIED') this.observe(object);
      }, { signal: this.abort.signal })
      .catch((error: unknown) => {
        if (!this.abort.signal.aborted) this.violations.push(`invariant watch failed: ${String(error)}`);
      });
  }

  stop(): Promise<void> {
    this.abort.abort();
    return this.done;
  }

  boundCount(): number {
    return this.owner.size;
  }

  private observe(host: Host): void {
    const name = host.metadata.name;
    const before = this.owner.get(name);
    const after = host.spec.consumerRef?.uid;
    if (before !== undefined && after !== undefined && before !== after) this.violations.push(`host ${name} went from claim ${before} to ${after} directly`);
    if (after === undefined) this.owner.delete(name);
    else this.owner.set(name, after);
    const holders = [...this.owner].filter(([, uid]) => uid === after).map(([host]) => host);
    if (after !== undefined && holders.length > 1) this.violations.push(`claim ${after} holds hosts ${holders.join(', ')}`);
  }
}

async function leaderLogFile(): Promise<string | undefined> {
  const lease = await admin.get<{ spec: { holderIdentity?: string } }>('/apis/coordination.k8s.io/v1/namespaces/hostclaim-system/leases/hostclaim-binder');
  const holder = lease.spec.holderIdentity ?? '';
  const { readFile } = await import('node:fs/promises');
  for (const file of [env.serverLogPath, ...replicas.map((r) => r.logFile)]) {
    if ((await readFile(file, 'utf8').catch(() => '')).includes(`"identity":"${holder}"`)) return file;
  }
  return undefined;
}

/** SIGKILLs whichever process leads and starts a replacement, so three replicas keep running. */
async function killLeader(): Promise<void> {
  const file = await leaderLogFile();
  const replica = replicas.find((r) => r.logFile === file);
  if (replica === undefined) {
    await env.restartServer({ kill: true });
    return;
  }
  process.kill(-replica.pid, 'SIGKILL');
  await replica.exited;
  replicas.splice(replicas.indexOf(replica), 1, await env.startReplica());
}

async function claims(): Promise<Claim[]> {
  return (await tenant.get<{ items: Claim[] }>(claimsPath)).items;
}

function associated(claim: Claim): boolean {
  return claim.status?.conditions?.some((c) => c.type === 'Associated' && c.status === 'True') ?? false;
}

describe('binding under contention and crashes', () => {
  it('binds exactly one claim per host across leader SIGKILLs, then rebinds freed hosts', async () => {
    const checker = new InvariantChecker();
    await checker.start();
    await admin.create(`/apis/metal3.io/v1alpha1/namespaces/${POOL}/hostdeploypolicies`, {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HostDeployPolicy',
      metadata: { name: 'scale', namespace: POOL },
      spec: { hostClaimNamespaces: { names: ['tenant-a'] } },
    });
    const names = Array.from({ length: CLAIMS }, (_, i) => `claim-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < names.length; i += 25) {
      await Promise.all(
        names.slice(i, i + 25).map((name) =>
          tenant.create(claimsPath, { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name }, spec: { poweredOn: false, hostSelector: { matchLabels: { pool: 'scale' } } } }),
        ),
      );
    }
    await pollUntil('a third of the hosts bound', () => Promise.resolve(checker.boundCount() >= 30 ? true : undefined), { timeoutMs: 120_000, intervalMs: 50 });
    await killLeader();
    await pollUntil('two thirds of the hosts bound', () => Promise.resolve(checker.boundCount() >= 60 ? true : undefined), { timeoutMs: 120_000, intervalMs: 50 });
    await killLeader();

    await pollUntil('every host bound', () => Promise.resolve(checker.boundCount() === HOSTS ? true : undefined), { timeoutMs: 180_000 });
    const bound = await pollUntil(
      'the claims showing exactly the bound hosts',
      async () => {
        const all = await claims();
        return all.filter(associated).length === HOSTS ? all.filter(associated) : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(new Set(bound.map((c) => c.status?.bareMetalHost?.name)).size).toBe(HOSTS);

    // Freed hosts go to the waiting claims.
    const released = bound.slice(0, 40).map((c) => c.metadata.name);
    await Promise.all(released.map((name) => tenant.request('DELETE', `${claimsPath}/${name}`)));
    const rebound = await pollUntil(
      '40 waiting claims bound to the freed hosts',
      async () => {
        const all = await claims();
        const now = all.filter(associated);
        return all.length === CLAIMS - released.length && now.length === HOSTS ? now : undefined;
      },
      { timeoutMs: 180_000 },
    );
    expect(rebound.filter((c) => released.includes(c.metadata.name))).toEqual([]);
    await checker.stop();
    expect(checker.violations).toEqual([]);
    expect(checker.boundCount()).toBe(HOSTS);
  }, 900_000);
});
