/**
 * Binding and lifecycle with the real baremetal-operator (fixture
 * provisioner), only through the aggregator for tenants: a claim is bound
 * to a host its namespace may use, drives the host (image, user data,
 * power, reboot), mirrors its state, and gives it back clean; policies
 * admit and deny as specified; a tenant cannot make the server read a
 * Secret it may not read; nothing a tenant can read leaks infrastructure.
 *
 * The fixture keeps one state for all hosts (hostclaim-upstream.md §4), so
 * at most one host at a time is provisioned here.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBareMetalHost, getBareMetalHost, waitForProvisioningState } from '../controlplane/baremetal-operator.js';
import { watchEncodingErrors } from '../controlplane/apiserver-load.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';
import { rawClients } from '../support/raw-http.js';

const binDir = inject('controlPlaneBinDir');
const INFRA = 'infra';
const SETUP_TIMEOUT_MS = 20 * 60_000;
const STATE_TIMEOUT_MS = 90_000;
const BMC_ADDRESS = 'redfish+http://192.168.222.1';

let env: DevEnvironment;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

interface HostClaim {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; annotations?: Record<string, string> };
  status?: {
    conditions?: Condition[];
    bareMetalHost?: { namespace: string; name: string };
    hardwareData?: { namespace: string; name: string };
    poweredOn?: boolean;
  };
}

interface Host {
  metadata: { name: string; namespace: string; resourceVersion: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { consumerRef?: { kind?: string; name?: string }; online?: boolean; image?: { url?: string }; userData?: { name?: string; namespace?: string } };
  status?: { poweredOn?: boolean; provisioning?: { state?: string } };
}

beforeAll(async () => {
  env = await startDevEnvironment({
    workDir: path.join(os.tmpdir(), `binding-${process.pid}`),
    serverEntry: 'dist/src/main.js',
    binDir,
    bareMetalOperator: true,
  });
  const hosts = [
    { name: 'worker-0', labels: { role: 'worker' } },
    { name: 'worker-1', labels: { role: 'worker' } },
    { name: 'db-0', labels: { role: 'db' } },
  ];
  await Promise.all(hosts.map((h) => createBareMetalHost(env.controlPlane, { namespace: INFRA, ...h })));
  await Promise.all(hosts.map((h) => waitForProvisioningState(env.controlPlane, INFRA, h.name, 'available', STATE_TIMEOUT_MS)));
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await env.stop();
});

type Who = 'tenant-a' | 'tenant-b' | 'admin';

async function kubectl(who: Who, args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = who === 'admin' ? env.adminKubeconfigPath : env.tenantKubeconfigPaths[who];
  return env.controlPlane.kubectl(args, { kubeconfig, ...(stdin === undefined ? {} : { stdin }) });
}

async function ok(who: Who, args: string[], stdin?: string): Promise<string> {
  const result = await kubectl(who, args, stdin);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

async function applyPolicy(name: string, hostClaimNamespaces: Record<string, unknown> | undefined, annotations: Record<string, string> = {}): Promise<void> {
  const policy = {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'HostDeployPolicy',
    metadata: { name, namespace: INFRA, annotations },
    spec: hostClaimNamespaces === undefined ? {} : { hostClaimNamespaces },
  };
  await ok('admin', ['apply', '-f', '-'], JSON.stringify(policy));
}

async function deletePolicy(name: string): Promise<void> {
  await ok('admin', ['-n', INFRA, 'delete', 'hostdeploypolicies.metal3.io', name, '--ignore-not-found']);
}

async function getClaim(who: Who, namespace: string, name: string): Promise<HostClaim> {
  return JSON.parse(await ok(who, ['-n', namespace, 'get', 'hostclaims.tenancy.metal3.io', name, '-o', 'json'])) as HostClaim;
}

function condition(claim: HostClaim, type: string): Condition | undefined {
  return claim.status?.conditions?.find((c) => c.type === type);
}

function waitForClaim(who: Who, namespace: string, name: string, test: (claim: HostClaim) => boolean, what: string, timeoutMs = STATE_TIMEOUT_MS): Promise<HostClaim> {
  let last: HostClaim | undefined;
  return pollUntil(
    `${namespace}/${name} ${what}`,
    async () => {
      last = await getClaim(who, namespace, name);
      return test(last) ? last : undefined;
    },
    { timeoutMs, intervalMs: 100, describeFailure: () => JSON.stringify(last?.status ?? null) },
  );
}

function hostOf(claim: HostClaim): Promise<Host> {
  const ref = claim.status?.bareMetalHost;
  if (ref === undefined) throw new Error(`claim ${claim.metadata.name} is not bound`);
  return env.controlPlane.requestJson<Host>('GET', `/apis/metal3.io/v1alpha1/namespaces/${ref.namespace}/baremetalhosts/${ref.name}`);
}

function claimManifest(name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): string {
  return JSON.stringify({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name, annotations }, spec: { poweredOn: false, ...spec } });
}

async function boundHosts(): Promise<Host[]> {
  const list = (await env.controlPlane.requestJson<{ items: Host[] }>('GET', `/apis/metal3.io/v1alpha1/namespaces/${INFRA}/baremetalhosts`)).items;
  return list.filter((h) => h.spec.consumerRef !== undefined);
}

describe('the claim lifecycle', () => {
  it('binds, provisions with user data, powers on, reboots, and releases the host clean', async () => {
    await applyPolicy('lifecycle', { names: ['tenant-a'] });
    await ok('tenant-a', ['-n', 'tenant-a', 'create', 'secret', 'generic', 'web-userdata', '--from-literal=userData=#cloud-config\nhostname: web']);

    const createdAt = Date.now();
    await ok('tenant-a', ['-n', 'tenant-a', 'create', '-f', '-'], claimManifest('web', { hostSelector: { matchLabels: { role: 'worker' } } }));
    const bound = await waitForClaim('tenant-a', 'tenant-a', 'web', (c) => condition(c, 'Associated')?.status === 'True', 'associated');
    const associatedAfterMs = Date.now() - createdAt;
    console.info(`[binding] Associated after ${associatedAfterMs} ms`);
    expect(associatedAfterMs).toBeLessThan(2000);
    const hostRef = bound.status?.bareMetalHost;
    expect(hostRef?.namespace).toBe(INFRA);
    expect(hostRef?.name).toMatch(/^worker-/);
    expect(bound.status?.hardwareData).toEqual({ namespace: 'tenant-a', name: `${INFRA}.${hostRef?.name ?? ''}` });
    const host = await hostOf(bound);
    expect(host.spec.consumerRef).toMatchObject({ kind: 'HostClaimRecord', name: 'tenant-a.web' });

    await ok('tenant-a', [
      '-n',
      'tenant-a',
      'patch',
      'hostclaims.tenancy.metal3.io',
      'web',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          poweredOn: true,
          image: { url: 'http://images.example/ubuntu.qcow2', checksum: 'http://images.example/ubuntu.qcow2.sha256', format: 'qcow2' },
          userData: { name: 'web-userdata' },
        },
      }),
    ]);
    const ready = await waitForClaim(
      'tenant-a',
      'tenant-a',
      'web',
      (c) => condition(c, 'Ready')?.status === 'True' && condition(c, 'Provisioned')?.status === 'True' && c.status?.poweredOn === true,
      'provisioned, ready and powered on',
    );
    const provisioned = await hostOf(ready);
    expect(provisioned.status?.provisioning?.state).toBe('provisioned');
    expect(provisioned.status?.poweredOn).toBe(true);
    expect(provisioned.spec.userData).toEqual({ name: 'tenant-a.web-userdata', namespace: INFRA });
    const copy = await env.controlPlane.requestJson<{ data: Record<string, string> }>('GET', `/api/v1/namespaces/${INFRA}/secrets/tenant-a.web-userdata`);
    expect(Buffer.from(copy.data['userData'] ?? '', 'base64').toString()).toBe('#cloud-config\nhostname: web');

    // A reboot request reaches the host, BMO handles it, and it is cleared on the claim.
    await ok('tenant-a', ['-n', 'tenant-a', 'annotate', 'hostclaims.tenancy.metal3.io', 'web', 'reboot.metal3.io=']);
    await waitForClaim('tenant-a', 'tenant-a', 'web', (c) => !('reboot.metal3.io' in (c.metadata.annotations ?? {})), 'reboot annotation cleared');
    const events = await ok('tenant-a', ['-n', 'tenant-a', 'get', 'events', '--field-selector', 'involvedObject.name=web', '-o', 'json']);
    const reasons = (JSON.parse(events) as { items: { reason: string }[] }).items.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Bound', 'Provisioning', 'RebootRequested', 'Rebooted']));
    const described = await ok('tenant-a', ['-n', 'tenant-a', 'describe', 'hostclaims.tenancy.metal3.io', 'web']);
    expect(described).toContain('Bound');

    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hostclaims.tenancy.metal3.io', 'web', '--wait', '--timeout=120s']);
    const released = (await getBareMetalHost(env.controlPlane, INFRA, hostRef?.name ?? '')) as Host;
    expect(released.spec.consumerRef).toBeUndefined();
    expect(released.spec.image).toBeUndefined();
    expect(released.spec.userData).toBeUndefined();
    await waitForProvisioningState(env.controlPlane, INFRA, hostRef?.name ?? '', 'available', STATE_TIMEOUT_MS);
    const copies = await env.controlPlane.requestJson<{ items: unknown[] }>('GET', `/api/v1/namespaces/${INFRA}/secrets?labelSelector=infra.tenancy.metal3.io/claim-record-uid`);
    expect(copies.items).toEqual([]);
    await deletePolicy('lifecycle');
  }, 300_000);
});

describe("the binder's metrics", () => {
  const masters = { user: 'metrics-reader', groups: ['system:masters', 'system:authenticated'] };

  /** One sample of a replica's /metrics, by its full series text (`name{labels}`). */
  async function sample(serverUrl: string, series: string): Promise<number> {
    const response = await (await rawClients(env, serverUrl)).direct(masters, { method: 'GET', path: '/metrics' });
    expect(response.status).toBe(200);
    const line = response.body.split('\n').find((l) => l.startsWith(`${series} `));
    if (line === undefined) throw new Error(`${serverUrl} exports no ${series}`);
    return Number(line.slice(series.length + 1));
  }
  const binder = 'hostclaim-binder';
  const reconciles = (url: string): Promise<number[]> =>
    Promise.all(['success', 'error', 'requeue_after'].map((result) => sample(url, `controller_runtime_reconcile_total{controller="${binder}",result="${result}"}`)));
  const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

  it('tell which replica leads, and count the leader\'s queue and reconciles under client-go and controller-runtime names', async () => {
    const replica = await env.startReplica();
    const follower = env.replicaUrls.at(-1) ?? '';
    const leaderBefore = sum(await reconciles(env.serverUrl));
    const addsBefore = await sample(env.serverUrl, `workqueue_adds_total{name="${binder}"}`);
    await ok('tenant-b', ['-n', 'tenant-b', 'create', '-f', '-'], claimManifest('counted', { hostSelector: { matchLabels: { role: 'none' } } }));
    await waitForClaim('tenant-b', 'tenant-b', 'counted', (c) => condition(c, 'Associated')?.status === 'False', 'judged');

    expect(await sample(env.serverUrl, `leader_election_master_status{name="${binder}"}`)).toBe(1);
    expect(sum(await reconciles(env.serverUrl))).toBeGreaterThan(leaderBefore);
    expect(await sample(env.serverUrl, `workqueue_adds_total{name="${binder}"}`)).toBeGreaterThan(addsBefore);
    expect(await sample(env.serverUrl, `controller_runtime_reconcile_time_seconds_count{controller="${binder}"}`)).toBeGreaterThan(0);
    expect(await sample(env.serverUrl, `workqueue_queue_duration_seconds_count{name="${binder}"}`)).toBeGreaterThan(0);
    expect(await sample(env.serverUrl, `workqueue_work_duration_seconds_count{name="${binder}"}`)).toBeGreaterThan(0);
    // The other replica serves the API but does not bind: its series exist, at 0.
    expect(await sample(follower, `leader_election_master_status{name="${binder}"}`)).toBe(0);
    expect(await reconciles(follower)).toEqual([0, 0, 0]);
    expect(await sample(follower, `workqueue_depth{name="${binder}"}`)).toBe(0);
    expect(await sample(follower, `workqueue_longest_running_processor_seconds{name="${binder}"}`)).toBe(0);

    await ok('tenant-b', ['-n', 'tenant-b', 'delete', 'hostclaims.tenancy.metal3.io', 'counted', '--wait']);
    await replica.stop();
  }, 120_000);
});

describe('HostDeployPolicy', () => {
  it('binds nothing without an admitting policy, and says so without naming hosts', async () => {
    await ok('tenant-b', ['-n', 'tenant-b', 'create', '-f', '-'], claimManifest('orphan', {}));
    const claim = await waitForClaim('tenant-b', 'tenant-b', 'orphan', (c) => condition(c, 'Associated')?.reason === 'NoAdmittingPolicy', 'refused');
    const text = JSON.stringify(claim);
    for (const hostName of ['worker-0', 'worker-1', 'db-0', `"${INFRA}"`, `${INFRA}/`]) expect(text).not.toContain(hostName);
    expect(claim.status?.bareMetalHost).toBeUndefined();
    // A policy with hostClaimNamespaces omitted admits nothing either.
    await applyPolicy('empty', undefined);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await getClaim('tenant-b', 'tenant-b', 'orphan')).status?.bareMetalHost).toBeUndefined();
    await deletePolicy('empty');
    await ok('tenant-b', ['-n', 'tenant-b', 'delete', 'hostclaims.tenancy.metal3.io', 'orphan', '--wait']);
  }, 120_000);

  it.each([
    ['names', { names: ['tenant-b'] }, { names: ['tenant-a'] }],
    ['anchored nameMatches', { nameMatches: 'tenant-[b]' }, { nameMatches: 'tenant' }],
    ['hasLabels', { hasLabels: [{ name: 'tier', value: 'gold' }] }, { hasLabels: [{ name: 'tier', value: 'silver' }] }],
  ])('%s admits and denies as specified', async (_label, admitting, denying) => {
    await ok('admin', ['label', 'namespace', 'tenant-b', 'tier=gold', '--overwrite']);
    const claimName = `by-${_label.replace(/\W+/g, '-').toLowerCase()}`;
    await applyPolicy('under-test', denying);
    await ok('tenant-b', ['-n', 'tenant-b', 'create', '-f', '-'], claimManifest(claimName, { hostSelector: { matchLabels: { role: 'db' } } }));
    await waitForClaim('tenant-b', 'tenant-b', claimName, (c) => condition(c, 'Associated')?.reason === 'NoAdmittingPolicy', 'denied');
    // A policy change applies to the next binding at once.
    await applyPolicy('under-test', admitting);
    const bound = await waitForClaim('tenant-b', 'tenant-b', claimName, (c) => condition(c, 'Associated')?.status === 'True', 'admitted', 10_000);
    expect(bound.status?.bareMetalHost?.name).toBe('db-0');
    await ok('tenant-b', ['-n', 'tenant-b', 'delete', 'hostclaims.tenancy.metal3.io', claimName, '--wait', '--timeout=120s']);
    await deletePolicy('under-test');
    await waitForProvisioningState(env.controlPlane, INFRA, 'db-0', 'available', STATE_TIMEOUT_MS);
  }, 180_000);

  it('keeps a revoked binding running and tells the tenant and the admins', async () => {
    await applyPolicy('revocable', { names: ['tenant-b'] });
    await ok('tenant-b', ['-n', 'tenant-b', 'create', '-f', '-'], claimManifest('kept', { hostSelector: { matchLabels: { role: 'db' } } }));
    await waitForClaim('tenant-b', 'tenant-b', 'kept', (c) => condition(c, 'Associated')?.status === 'True', 'bound');
    await deletePolicy('revocable');
    const revoked = await waitForClaim('tenant-b', 'tenant-b', 'kept', (c) => condition(c, 'Authorized')?.status === 'False', 'revoked');
    expect(condition(revoked, 'Associated')?.status).toBe('True');
    expect((await getBareMetalHost(env.controlPlane, INFRA, 'db-0')).spec).toMatchObject({ consumerRef: { name: 'tenant-b.kept' } });
    const adminEvents = await ok('admin', ['-n', INFRA, 'get', 'events', '--field-selector', 'involvedObject.name=db-0,reason=PolicyRevoked', '-o', 'name']);
    expect(adminEvents.trim()).not.toBe('');
    await ok('tenant-b', ['-n', 'tenant-b', 'delete', 'hostclaims.tenancy.metal3.io', 'kept', '--wait', '--timeout=120s']);
    await waitForProvisioningState(env.controlPlane, INFRA, 'db-0', 'available', STATE_TIMEOUT_MS);
  }, 180_000);
});

describe('confused deputy', () => {
  it('refuses a Secret reference the requester may not read, and copies nothing', async () => {
    await applyPolicy('deputy', { names: ['tenant-a'] });
    await ok('admin', ['-n', 'tenant-a', 'create', 'secret', 'generic', 'admin-only', '--from-literal=userData=secret']);
    await ok('admin', ['-n', 'tenant-a', 'create', 'secret', 'generic', 'shared', '--from-literal=userData=ok']);
    await ok('admin', ['-n', 'tenant-a', 'create', 'role', 'claim-operator', '--verb=*', '--resource=hostclaims.tenancy.metal3.io']);
    await ok('admin', ['-n', 'tenant-a', 'create', 'role', 'shared-reader', '--verb=get', '--resource=secrets', '--resource-name=shared']);
    await ok('admin', ['-n', 'tenant-a', 'create', 'rolebinding', 'claim-operator', '--role=claim-operator', '--user=operator']);
    await ok('admin', ['-n', 'tenant-a', 'create', 'rolebinding', 'shared-reader', '--role=shared-reader', '--user=operator']);
    const asOperator = (args: string[], stdin?: string) => kubectl('admin', ['--as=operator', '-n', 'tenant-a', ...args], stdin);

    const refused = await asOperator(['create', '-f', '-', '-o', 'json'], claimManifest('deputy', { userData: { name: 'admin-only' } }));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Forbidden');
    expect(refused.stderr).toContain('secrets "admin-only"');
    expect((await kubectl('admin', ['-n', 'tenant-a', 'get', 'hostclaims.tenancy.metal3.io', 'deputy'])).code).not.toBe(0);

    const allowed = await asOperator(['create', '-f', '-'], claimManifest('deputy', { userData: { name: 'shared' } }));
    expect(allowed.code).toBe(0);
    const patched = await asOperator(['patch', 'hostclaims.tenancy.metal3.io', 'deputy', '--type=merge', '-p', '{"spec":{"userData":{"name":"admin-only"}}}']);
    expect(patched.code).not.toBe(0);
    expect(patched.stderr).toContain('Forbidden');
    await waitForClaim('admin', 'tenant-a', 'deputy', (c) => condition(c, 'Synchronized')?.status === 'True', 'synchronized');
    const copies = await env.controlPlane.requestJson<{ items: { data: Record<string, string> }[] }>(
      'GET',
      `/api/v1/namespaces/${INFRA}/secrets?labelSelector=infra.tenancy.metal3.io/claim-record-uid`,
    );
    expect(copies.items.map((s) => Buffer.from(s.data['userData'] ?? '', 'base64').toString())).toEqual(['ok']);
    await ok('admin', ['-n', 'tenant-a', 'delete', 'hostclaims.tenancy.metal3.io', 'deputy', '--wait', '--timeout=120s']);
    await deletePolicy('deputy');
  }, 180_000);
});

describe('what a tenant can read', () => {
  it('never contains BMC addresses, credentials Secret names, or other tenants', async () => {
    await applyPolicy('leaks', { names: ['tenant-a', 'tenant-b'] });
    await ok('tenant-b', ['-n', 'tenant-b', 'create', '-f', '-'], claimManifest('secret-project', { hostSelector: { matchLabels: { role: 'db' } } }));
    await ok('tenant-a', ['-n', 'tenant-a', 'create', '-f', '-'], claimManifest('visible', { hostSelector: { matchLabels: { role: 'worker' } } }));
    await waitForClaim('tenant-a', 'tenant-a', 'visible', (c) => condition(c, 'Associated')?.status === 'True', 'bound');
    await waitForClaim('tenant-b', 'tenant-b', 'secret-project', (c) => condition(c, 'Associated')?.status === 'True', 'bound');
    const readable = [
      await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hostclaims.tenancy.metal3.io', '-o', 'json']),
      await ok('tenant-a', ['-n', 'tenant-a', 'describe', 'hostclaims.tenancy.metal3.io']),
      await ok('tenant-a', ['-n', 'tenant-a', 'get', 'events', '-o', 'json']),
      await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata.tenancy.metal3.io', '-o', 'json']),
      await ok('tenant-a', ['get', 'hostclaims.tenancy.metal3.io', '-A', '-o', 'json']).catch((error: unknown) => String(error)),
    ].join('\n');
    for (const secretText of [BMC_ADDRESS, '-bmc-secret', 'secret-project', 'tenant-b', 'credentialsName', 'hostclaim-system']) {
      expect(readable).not.toContain(secretText);
    }
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hostclaims.tenancy.metal3.io', 'visible', '--wait', '--timeout=120s']);
    await ok('tenant-b', ['-n', 'tenant-b', 'delete', 'hostclaims.tenancy.metal3.io', 'secret-project', '--wait', '--timeout=120s']);
    await pollUntil('every host released', async () => ((await boundHosts()).length === 0 ? true : undefined), { timeoutMs: STATE_TIMEOUT_MS });
    await deletePolicy('leaks');
  }, 180_000);
});

describe('Secret copies', () => {
  it("follow a change of the tenant's Secret within seconds, through the binder's Secret watch, and go when the claim drops them", async () => {
    await applyPolicy('copies', { names: ['tenant-a'] });
    const setUserData = async (value: string, verb: 'create' | 'replace'): Promise<void> => {
      const manifest = await ok('tenant-a', ['-n', 'tenant-a', 'create', 'secret', 'generic', 'follow-userdata', `--from-literal=userData=${value}`, '--dry-run=client', '-o', 'json']);
      await ok('tenant-a', ['-n', 'tenant-a', verb, '-f', '-'], manifest);
    };
    const copy = async (): Promise<string | undefined> => {
      const secret = await env.controlPlane.request('GET', `/api/v1/namespaces/${INFRA}/secrets/tenant-a.follow-userdata`);
      if (secret.status !== 200) return undefined;
      return Buffer.from((JSON.parse(secret.body) as { data: Record<string, string> }).data['userData'] ?? '', 'base64').toString();
    };
    await setUserData('#cloud-config\nhostname: one', 'create');
    await ok('tenant-a', ['-n', 'tenant-a', 'create', '-f', '-'], claimManifest('follow', { hostSelector: { matchLabels: { role: 'worker' } }, userData: { name: 'follow-userdata' } }));
    await waitForClaim('tenant-a', 'tenant-a', 'follow', (c) => condition(c, 'Synchronized')?.status === 'True', 'synchronized');
    expect(await copy()).toBe('#cloud-config\nhostname: one');

    // Nothing but the Secret may requeue the claim meanwhile: wait until the claim and its host stay unchanged.
    const versions = async (): Promise<string> => {
      const claim = await getClaim('tenant-a', 'tenant-a', 'follow');
      return `${claim.metadata.resourceVersion}/${(await hostOf(claim)).metadata.resourceVersion}`;
    };
    let previous = '';
    const settled = await pollUntil(
      'the claim and its host to settle',
      async () => {
        const current = await versions();
        const same = current === previous;
        previous = current;
        return same ? current : undefined;
      },
      { timeoutMs: STATE_TIMEOUT_MS, intervalMs: 3000 },
    );

    await setUserData('#cloud-config\nhostname: two', 'replace');
    const changedAt = Date.now();
    // The binder's Secret informer re-watches only after 300-600 s and relists only on 410 (and a list requeues no
    // claim), so a copy that follows within 10 s, with the claim and the host unchanged, came through the watch.
    await pollUntil('the copy to follow the Secret', async () => ((await copy()) === '#cloud-config\nhostname: two' ? true : undefined), { timeoutMs: 10_000, intervalMs: 200 });
    console.info(`[binding] copy followed its Secret after ${Date.now() - changedAt} ms`);
    expect(await versions()).toBe(settled);

    // The copy names the source version it was written from: a reconcile that finds both in its cache reads neither.
    const source = await env.controlPlane.requestJson<{ metadata: { uid: string; resourceVersion: string } }>('GET', '/api/v1/namespaces/tenant-a/secrets/follow-userdata');
    const written = await env.controlPlane.requestJson<{ metadata: { annotations?: Record<string, string> } }>('GET', `/api/v1/namespaces/${INFRA}/secrets/tenant-a.follow-userdata`);
    expect(written.metadata.annotations?.['infra.tenancy.metal3.io/copy-of']).toBe(`${source.metadata.uid}/${source.metadata.resourceVersion}`);

    // A reference the tenant drops: the binder finds the copy in its Secret cache (no LIST) and deletes it, and the host stops naming it.
    await ok('tenant-a', ['-n', 'tenant-a', 'patch', 'hostclaims.tenancy.metal3.io', 'follow', '--type=merge', '-p', '{"spec":{"userData":null}}']);
    await pollUntil(
      'the dropped copy to go and the host to stop naming it',
      async () => ((await copy()) === undefined && (await hostOf(await getClaim('tenant-a', 'tenant-a', 'follow'))).spec.userData === undefined ? true : undefined),
      { timeoutMs: STATE_TIMEOUT_MS },
    );

    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hostclaims.tenancy.metal3.io', 'follow', '--wait', '--timeout=120s']);
    await deletePolicy('copies');
    expect(await watchEncodingErrors(env.controlPlane)).toEqual({ count: 0, first: [] });
  }, 180_000);
});

describe('a host removed by the admin', () => {
  it('ends the binding with a clear condition, and the claim is not silently moved', async () => {
    await applyPolicy('removal', { names: ['tenant-a'] });
    await ok('tenant-a', ['-n', 'tenant-a', 'create', '-f', '-'], claimManifest('stranded', {}));
    // Every host matches; the binder picks in name order, so db-0.
    await waitForClaim('tenant-a', 'tenant-a', 'stranded', (c) => c.status?.bareMetalHost?.name === 'db-0', 'bound to db-0');
    await ok('admin', ['-n', INFRA, 'delete', 'baremetalhosts.metal3.io', 'db-0', '--wait', '--timeout=120s']);
    const ended = await waitForClaim('tenant-a', 'tenant-a', 'stranded', (c) => condition(c, 'Associated')?.reason === 'MissingBareMetalHost', 'binding ended');
    expect(condition(ended, 'Associated')?.status).toBe('False');
    expect(ended.status?.bareMetalHost).toBeUndefined();
    // A free worker host exists, yet the claim stays unbound: its workload is gone, not moved.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await getClaim('tenant-a', 'tenant-a', 'stranded')).status?.bareMetalHost).toBeUndefined();
    await ok('tenant-a', ['-n', 'tenant-a', 'delete', 'hostclaims.tenancy.metal3.io', 'stranded', '--wait', '--timeout=60s']);
    await deletePolicy('removal');
  }, 180_000);
});
