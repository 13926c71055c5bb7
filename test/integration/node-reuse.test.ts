/**
 * Node reuse as CAPM3 defines it, and the inventory tenants read, with the
 * real baremetal-operator (fixture provisioner):
 * - the `make up` inventory: distinct hardware, MACs, IPs and hostnames; a
 *   claim selects a host by a hardware label and reads back that host's
 *   addresses and boot MAC through HardwareData;
 * - (c) a pool claim without a labelled host binds any fitting host;
 * - (a) a host kept for pool P is never taken by a claim of another pool or
 *   of none, even when nothing else fits; P's next claim takes it;
 * - (b) a pool claim created while its host is released waits for it
 *   (WaitingForNodeReuseHost) and binds that host once it is available;
 * - (d) two concurrent rolling upgrades of two pools in two namespaces each
 *   get their own hosts back;
 * - (e) a pool claim created after the old claim's deletion but before the
 *   binder got to label the released host waits for that host (the race of
 *   (d) on a busy binder, made deterministic).
 *
 * Deprovisioning takes 0.2 to 10 s with the fixture. To hold a host in release
 * for as long as a test needs, the admin pauses it
 * (`baremetalhost.metal3.io/paused`, BMO skips paused hosts) before the
 * claim is deleted: the binder strips the workload and labels the host, BMO
 * deprovisions only once the annotation is removed.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBareMetalHost, createSampleInventory, getBareMetalHost, patchBareMetalHost, waitForProvisioningState } from '../controlplane/baremetal-operator.js';
import { startDevEnvironment, TENANTS, type DevEnvironment, type Tenant } from '../controlplane/environment.js';
import { sampleInventory, testHost } from '../controlplane/inventory.js';
import { pollUntil } from '../controlplane/wait.js';

const binDir = inject('controlPlaneBinDir');
const SETUP_TIMEOUT_MS = 20 * 60_000;
const STATE_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 10 * 60_000;
const REUSE = 'reuse';
const NODE_REUSE = 'infrastructure.cluster.x-k8s.io/node-reuse';
const PAUSED = 'baremetalhost.metal3.io/paused';
const BOOT_MAC = 'tenancy.metal3.io/boot-mac-address';
/** On a host, makes kube-apiserver refuse any write that labels it for node reuse (see holdPolicy). */
const HOLD_RELEASE = 'node-reuse-test.example/hold-release';
const HOLD_POLICY = 'node-reuse-test-hold-release';
const reuseHosts = [0, 1, 2, 3].map((index) => testHost(`r-${index}`, index, { role: 'worker', slot: `r-${index}` }));

let env: DevEnvironment;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

interface HostClaim {
  metadata: { name: string; namespace: string };
  status?: { conditions?: Condition[]; bareMetalHost?: { namespace: string; name: string }; hardwareData?: { namespace: string; name: string } };
}

interface HardwareData {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { hardware?: { hostname?: string; ramMebibytes?: number; cpu?: { count?: number }; nics?: { name: string; mac: string; ip?: string }[]; storage?: { type: string }[] } };
}

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `node-reuse-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, bareMetalOperator: true });
  await createSampleInventory(env.controlPlane, 'infra', TENANTS, STATE_TIMEOUT_MS);
  await env.controlPlane.requestJson('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: REUSE } });
  await env.controlPlane.requestJson('POST', `/apis/metal3.io/v1alpha1/namespaces/${REUSE}/hostdeploypolicies`, {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'HostDeployPolicy',
    metadata: { name: 'tenants', namespace: REUSE },
    spec: { hostClaimNamespaces: { names: TENANTS } },
  });
  await Promise.all(reuseHosts.map((host) => createBareMetalHost(env.controlPlane, { namespace: REUSE, ...host })));
  await Promise.all(reuseHosts.map(({ name }) => waitForProvisioningState(env.controlPlane, REUSE, name, 'available', STATE_TIMEOUT_MS)));
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await env.stop();
});

async function ok(who: Tenant | 'admin', args: string[], stdin?: string): Promise<string> {
  const kubeconfig = who === 'admin' ? env.adminKubeconfigPath : env.tenantKubeconfigPaths[who];
  const result = await env.controlPlane.kubectl(args, { kubeconfig, ...(stdin === undefined ? {} : { stdin }) });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

async function createClaim(tenant: Tenant, name: string, spec: Record<string, unknown>): Promise<void> {
  const claim = { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name }, spec: { poweredOn: false, ...spec } };
  await ok(tenant, ['-n', tenant, 'create', '-f', '-'], JSON.stringify(claim));
}

/** A claim for the `reuse` hosts; with a workload when `image` is set. */
function reuseSpec(options: { nodeReuse?: string; slot?: string; image?: boolean } = {}): Record<string, unknown> {
  return {
    hostSelector: { inNamespace: REUSE, matchLabels: { role: 'worker', ...(options.slot === undefined ? {} : { slot: options.slot }) } },
    ...(options.nodeReuse === undefined ? {} : { nodeReuse: options.nodeReuse }),
    ...(options.image === true ? { poweredOn: true, image: { url: 'http://images.example/ubuntu.qcow2', checksum: 'http://images.example/ubuntu.qcow2.sha256' } } : {}),
  };
}

async function getClaim(tenant: Tenant, name: string): Promise<HostClaim> {
  return JSON.parse(await ok(tenant, ['-n', tenant, 'get', 'hostclaims.tenancy.metal3.io', name, '-o', 'json'])) as HostClaim;
}

function associated(claim: HostClaim): Condition | undefined {
  return claim.status?.conditions?.find((c) => c.type === 'Associated');
}

function waitForClaim(tenant: Tenant, name: string, test: (claim: HostClaim) => boolean, what: string): Promise<HostClaim> {
  let last: HostClaim | undefined;
  return pollUntil(
    `${tenant}/${name} ${what}`,
    async () => {
      last = await getClaim(tenant, name);
      return test(last) ? last : undefined;
    },
    { timeoutMs: STATE_TIMEOUT_MS, intervalMs: 200, describeFailure: () => JSON.stringify(last?.status ?? null) },
  );
}

/** The name of the host the claim is bound to, once it is. */
async function boundHost(tenant: Tenant, name: string): Promise<string> {
  const claim = await waitForClaim(tenant, name, (c) => associated(c)?.status === 'True', 'bound');
  return claim.status?.bareMetalHost?.name ?? '';
}

async function waitForReason(tenant: Tenant, name: string, reason: string): Promise<Condition> {
  const claim = await waitForClaim(tenant, name, (c) => associated(c)?.reason === reason, `unbound with ${reason}`);
  const condition = associated(claim);
  if (condition === undefined) throw new Error('unreachable: the claim has an Associated condition');
  return condition;
}

async function deleteClaim(tenant: Tenant, name: string): Promise<void> {
  await ok(tenant, ['-n', tenant, 'delete', 'hostclaims.tenancy.metal3.io', name, '--wait=false']);
}

async function waitForClaimGone(tenant: Tenant, name: string): Promise<void> {
  await pollUntil(`${tenant}/${name} to be gone`, async () => ((await ok(tenant, ['-n', tenant, 'get', 'hostclaims.tenancy.metal3.io', '-o', 'name'])).includes(`/${name}\n`) ? undefined : true), {
    timeoutMs: STATE_TIMEOUT_MS,
    intervalMs: 200,
  });
}

async function reuseLabel(host: string): Promise<string | undefined> {
  return (await getBareMetalHost(env.controlPlane, REUSE, host)).metadata.labels?.[NODE_REUSE];
}

async function waitForReuseLabel(host: string, value: string): Promise<void> {
  await pollUntil(`${REUSE}/${host} to be labelled ${value}`, async () => ((await reuseLabel(host)) === value ? true : undefined), { timeoutMs: STATE_TIMEOUT_MS, intervalMs: 200 });
}

async function freeHosts(): Promise<string[]> {
  const list = await env.controlPlane.requestJson<{ items: { metadata: { name: string }; spec: { consumerRef?: unknown } }[] }>('GET', `/apis/metal3.io/v1alpha1/namespaces/${REUSE}/baremetalhosts`);
  return list.items.filter((h) => h.spec.consumerRef === undefined).map((h) => h.metadata.name).sort();
}

/** Every claim gone, every reuse host free and available, node-reuse labels cleared by the admin. */
async function cleanUp(claims: [Tenant, string][]): Promise<void> {
  await Promise.all(claims.map(([tenant, name]) => deleteClaim(tenant, name)));
  await Promise.all(claims.map(([tenant, name]) => waitForClaimGone(tenant, name)));
  await Promise.all(reuseHosts.map(({ name }) => waitForProvisioningState(env.controlPlane, REUSE, name, 'available', STATE_TIMEOUT_MS)));
  await ok('admin', ['-n', REUSE, 'label', 'baremetalhosts.metal3.io', '--all', `${NODE_REUSE}-`]);
  expect(await freeHosts()).toEqual(['r-0', 'r-1', 'r-2', 'r-3']);
}

/**
 * A ValidatingAdmissionPolicy (and its binding) refusing, on a host annotated
 * HOLD_RELEASE, any update that leaves the node-reuse label on it: the
 * binder's release labels the host in its first write, so that write fails
 * (and is retried) until the annotation goes, while BMO and the binder's
 * other writes go through.
 */
const holdPolicy = [
  {
    path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: HOLD_POLICY },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['metal3.io'], apiVersions: ['*'], operations: ['UPDATE'], resources: ['baremetalhosts'] }] },
        validations: [
          {
            expression: `!(has(object.metadata.annotations) && '${HOLD_RELEASE}' in object.metadata.annotations && has(object.metadata.labels) && '${NODE_REUSE}' in object.metadata.labels)`,
            message: 'the node-reuse test holds the release of this host',
          },
        ],
      },
    },
  },
  {
    path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
    body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: HOLD_POLICY }, spec: { policyName: HOLD_POLICY, validationActions: ['Deny'] } },
  },
];

/** Holds the host's release, once kube-apiserver enforces the policy (it loads policies asynchronously). */
async function holdRelease(host: string): Promise<void> {
  await patchBareMetalHost(env.controlPlane, REUSE, host, { metadata: { annotations: { [HOLD_RELEASE]: 'node-reuse-test' } } });
  await pollUntil(
    `the release of ${REUSE}/${host} to be held`,
    async () => {
      const probe = await env.controlPlane.kubectl(['-n', REUSE, 'label', 'baremetalhosts.metal3.io', host, `${NODE_REUSE}=probe`, '--dry-run=server'], { kubeconfig: env.adminKubeconfigPath });
      return probe.code !== 0 && probe.stderr.includes('the node-reuse test holds the release of this host') ? true : undefined;
    },
    { timeoutMs: STATE_TIMEOUT_MS, intervalMs: 200 },
  );
}

describe('the make up inventory', () => {
  it('has hosts with distinct MACs, IPs, hostnames and hardware, as tenants read them', async () => {
    const list = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata.tenancy.metal3.io', '-o', 'json'])) as { items: HardwareData[] };
    const sample = list.items.filter((hd) => hd.metadata.name.startsWith('infra.')).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    expect(sample.map((hd) => hd.metadata.name)).toEqual(['infra.host-0', 'infra.host-1', 'infra.host-2']);
    expect(sample.map((hd) => hd.spec.hardware?.hostname)).toEqual(['host-0.lab.example', 'host-1.lab.example', 'host-2.lab.example']);
    expect(sample.map((hd) => hd.metadata.annotations?.[BOOT_MAC])).toEqual(sampleInventory.map((h) => h.bootMACAddress));
    expect(sample.map((hd) => [hd.spec.hardware?.cpu?.count, hd.spec.hardware?.ramMebibytes])).toEqual([
      [64, 262_144],
      [128, 524_288],
      [24, 131_072],
    ]);
    const macs = sample.flatMap((hd) => (hd.spec.hardware?.nics ?? []).map((nic) => nic.mac));
    expect(macs).toEqual(sampleInventory.flatMap((h) => h.hardware.nics.map((nic) => nic.mac)));
    expect(new Set(macs).size).toBe(7);
    const ips = sample.flatMap((hd) => (hd.spec.hardware?.nics ?? []).flatMap((nic) => (nic.ip === undefined ? [] : [nic.ip])));
    expect(ips).toEqual(['192.0.2.10', '198.51.100.10', '192.0.2.11', '198.51.100.11', '192.0.2.12', '198.51.100.12']);
  });

  it('lets a claim select a host by a hardware label and read back that host\'s addresses and boot MAC', async () => {
    await createClaim('tenant-a', 'spinning', { hostSelector: { inNamespace: 'infra', matchLabels: { disk: 'hdd' } } });
    const claim = await waitForClaim('tenant-a', 'spinning', (c) => associated(c)?.status === 'True', 'bound');
    expect(claim.status?.bareMetalHost).toEqual({ namespace: 'infra', name: 'host-2' });
    expect(claim.status?.hardwareData).toEqual({ namespace: 'tenant-a', name: 'infra.host-2' });
    const hd = JSON.parse(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata.tenancy.metal3.io', 'infra.host-2', '-o', 'json'])) as HardwareData;
    expect(hd.metadata.annotations).toEqual({ [BOOT_MAC]: '52:54:00:0a:02:10' });
    expect(hd.spec.hardware?.hostname).toBe('host-2.lab.example');
    expect(hd.spec.hardware?.nics).toEqual([
      { name: 'eno1', model: '0x14e4 0x165f', mac: '52:54:00:0a:02:10', ip: '192.0.2.12', speedGbps: 1, pxe: true },
      { name: 'ens2f0', model: '0x8086 0x10fb', mac: '52:54:00:0a:02:11', ip: '198.51.100.12', speedGbps: 10 },
      { name: 'ens2f1', model: '0x8086 0x10fb', mac: '52:54:00:0a:02:12', speedGbps: 10 },
    ]);
    expect(hd.spec.hardware?.storage?.map((disk) => disk.type)).toEqual(['SSD', 'HDD', 'HDD']);
    // The same boot MAC through a jsonpath, as a script would read it.
    expect(await ok('tenant-a', ['-n', 'tenant-a', 'get', 'hardwaredata.tenancy.metal3.io', 'infra.host-2', '-o', 'jsonpath={.metadata.annotations.tenancy\\.metal3\\.io/boot-mac-address}'])).toBe('52:54:00:0a:02:10');
    await deleteClaim('tenant-a', 'spinning');
    await waitForClaimGone('tenant-a', 'spinning');
  });
});

describe('node reuse', () => {
  it('(c) binds any fitting host when no host carries the pool label, and labels it on release', async () => {
    await createClaim('tenant-a', 'c-0', reuseSpec({ nodeReuse: 'fresh' }));
    expect(await boundHost('tenant-a', 'c-0')).toBe('r-0');
    expect(await reuseLabel('r-0')).toBeUndefined();
    await deleteClaim('tenant-a', 'c-0');
    await waitForClaimGone('tenant-a', 'c-0');
    expect(await reuseLabel('r-0')).toBe('tenant-a.fresh');
    expect(await freeHosts()).toEqual(['r-0', 'r-1', 'r-2', 'r-3']);
  }, TEST_TIMEOUT_MS);

  it('(a) never gives a host kept for a pool to another pool or to no pool, even when nothing else fits; its pool takes it', async () => {
    // r-0 is kept for tenant-a's pool "fresh" (previous test).
    await createClaim('tenant-b', 'no-pool', reuseSpec());
    expect(await boundHost('tenant-b', 'no-pool')).toBe('r-1');
    await createClaim('tenant-b', 'same-name-other-namespace', reuseSpec({ nodeReuse: 'fresh' }));
    expect(await boundHost('tenant-b', 'same-name-other-namespace')).toBe('r-2');
    await createClaim('tenant-a', 'other-pool', reuseSpec({ nodeReuse: 'other' }));
    expect(await boundHost('tenant-a', 'other-pool')).toBe('r-3');
    // Only r-0 is left: a claim without a pool waits rather than taking it.
    await createClaim('tenant-b', 'nothing-else', reuseSpec());
    const waiting = await waitForReason('tenant-b', 'nothing-else', 'NoBareMetalHost');
    expect(waiting.status).toBe('False');
    expect(waiting.message).toContain('hosts kept for another node-reuse pool are not taken');
    expect(await reuseLabel('r-0')).toBe('tenant-a.fresh');
    expect(await freeHosts()).toEqual(['r-0']);
    // The pool's own claim takes it, and the label is consumed.
    await createClaim('tenant-a', 'fresh-again', reuseSpec({ nodeReuse: 'fresh' }));
    expect(await boundHost('tenant-a', 'fresh-again')).toBe('r-0');
    expect(await reuseLabel('r-0')).toBeUndefined();
    expect((await getClaim('tenant-b', 'nothing-else')).status?.bareMetalHost).toBeUndefined();
    await cleanUp([
      ['tenant-b', 'no-pool'],
      ['tenant-b', 'same-name-other-namespace'],
      ['tenant-a', 'other-pool'],
      ['tenant-b', 'nothing-else'],
      ['tenant-a', 'fresh-again'],
    ]);
  }, TEST_TIMEOUT_MS);

  it('(b) a pool claim created while its host is being released waits for that host, then binds it', async () => {
    await createClaim('tenant-a', 'web-0', reuseSpec({ nodeReuse: 'web', image: true }));
    const host = await boundHost('tenant-a', 'web-0');
    expect(host).toBe('r-0');
    await waitForProvisioningState(env.controlPlane, REUSE, host, 'provisioned', STATE_TIMEOUT_MS);
    await patchBareMetalHost(env.controlPlane, REUSE, host, { metadata: { annotations: { [PAUSED]: 'node-reuse-test' } } });
    await deleteClaim('tenant-a', 'web-0');
    await waitForReuseLabel(host, 'tenant-a.web');

    await createClaim('tenant-a', 'web-1', reuseSpec({ nodeReuse: 'web', image: true }));
    const waiting = await waitForReason('tenant-a', 'web-1', 'WaitingForNodeReuseHost');
    expect({ ...waiting, lastTransitionTime: undefined }).toEqual({
      type: 'Associated',
      status: 'False',
      reason: 'WaitingForNodeReuseHost',
      message: "The host released by this claim's node-reuse pool is not available yet (its previous workload is being removed); the claim is bound to it once it is.",
      lastTransitionTime: undefined,
      observedGeneration: 1,
    });
    // Three other hosts fit all along, and stay free.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(associated(await getClaim('tenant-a', 'web-1'))?.reason).toBe('WaitingForNodeReuseHost');
    expect(await freeHosts()).toEqual(['r-1', 'r-2', 'r-3']);

    await patchBareMetalHost(env.controlPlane, REUSE, host, { metadata: { annotations: { [PAUSED]: null } } });
    expect(await boundHost('tenant-a', 'web-1')).toBe(host);
    await waitForClaimGone('tenant-a', 'web-0');
    await cleanUp([['tenant-a', 'web-1']]);
  }, TEST_TIMEOUT_MS);

  it('(d) two concurrent rolling upgrades of two pools in two namespaces each get their own hosts back', async () => {
    await createClaim('tenant-a', 'db-0', reuseSpec({ nodeReuse: 'db', image: true }));
    await createClaim('tenant-b', 'db-0', reuseSpec({ nodeReuse: 'db', image: true }));
    const hostA = await boundHost('tenant-a', 'db-0');
    const hostB = await boundHost('tenant-b', 'db-0');
    expect([hostA, hostB].sort()).toEqual(['r-0', 'r-1']);
    await Promise.all([hostA, hostB].map((host) => waitForProvisioningState(env.controlPlane, REUSE, host, 'provisioned', STATE_TIMEOUT_MS)));
    await Promise.all([hostA, hostB].map((host) => patchBareMetalHost(env.controlPlane, REUSE, host, { metadata: { annotations: { [PAUSED]: 'node-reuse-test' } } })));

    // Both upgrades at once: delete the old machine, create the new one.
    await Promise.all((['tenant-a', 'tenant-b'] as const).map(async (tenant) => {
      await deleteClaim(tenant, 'db-0');
      await createClaim(tenant, 'db-1', reuseSpec({ nodeReuse: 'db', image: true }));
    }));
    await waitForReuseLabel(hostA, 'tenant-a.db');
    await waitForReuseLabel(hostB, 'tenant-b.db');
    await waitForReason('tenant-a', 'db-1', 'WaitingForNodeReuseHost');
    await waitForReason('tenant-b', 'db-1', 'WaitingForNodeReuseHost');
    expect(await freeHosts()).toEqual(['r-2', 'r-3']);

    // The hosts come back one after the other: BMO's fixture provisioner keeps one image state for all
    // hosts (see test/controlplane/baremetal-operator.ts), so one host deprovisioning while the other is
    // provisioned can undo each other's step every 10 s for good, which Ironic's per-host state never does.
    await patchBareMetalHost(env.controlPlane, REUSE, hostA, { metadata: { annotations: { [PAUSED]: null } } });
    expect(await boundHost('tenant-a', 'db-1')).toBe(hostA);
    await waitForProvisioningState(env.controlPlane, REUSE, hostA, 'provisioned', STATE_TIMEOUT_MS);
    // tenant-b's claim went on waiting for its own host, with two unlabelled hosts free.
    expect(associated(await getClaim('tenant-b', 'db-1'))?.reason).toBe('WaitingForNodeReuseHost');
    expect(await freeHosts()).toEqual(['r-2', 'r-3']);
    await patchBareMetalHost(env.controlPlane, REUSE, hostB, { metadata: { annotations: { [PAUSED]: null } } });
    expect(await boundHost('tenant-b', 'db-1')).toBe(hostB);
    expect(await freeHosts()).toEqual(['r-2', 'r-3']);
    await Promise.all((['tenant-a', 'tenant-b'] as const).map((tenant) => waitForClaimGone(tenant, 'db-0')));
    await cleanUp([
      ['tenant-a', 'db-1'],
      ['tenant-b', 'db-1'],
    ]);
  }, TEST_TIMEOUT_MS);

  it('(e) a pool claim created before the release of its pool\'s host labelled it waits for that host, and binds it', async () => {
    for (const { path: collection, body } of holdPolicy) await env.controlPlane.requestJson('POST', collection, body);
    await createClaim('tenant-a', 'api-0', reuseSpec({ nodeReuse: 'api', image: true }));
    const host = await boundHost('tenant-a', 'api-0');
    expect(host).toBe('r-0');
    await waitForProvisioningState(env.controlPlane, REUSE, host, 'provisioned', STATE_TIMEOUT_MS);
    await holdRelease(host);

    // The old claim is deleted, the new one created while the host is still bound to the old one and unlabelled.
    await deleteClaim('tenant-a', 'api-0');
    await createClaim('tenant-a', 'api-1', reuseSpec({ nodeReuse: 'api', image: true }));
    const waiting = await waitForReason('tenant-a', 'api-1', 'WaitingForNodeReuseHost');
    expect(waiting.status).toBe('False');
    expect(await reuseLabel(host)).toBeUndefined();
    expect(await freeHosts()).toEqual(['r-1', 'r-2', 'r-3']);

    await patchBareMetalHost(env.controlPlane, REUSE, host, { metadata: { annotations: { [HOLD_RELEASE]: null } } });
    expect(await boundHost('tenant-a', 'api-1')).toBe(host);
    expect(await freeHosts()).toEqual(['r-1', 'r-2', 'r-3']);
    await waitForClaimGone('tenant-a', 'api-0');
    for (const { path: collection } of [...holdPolicy].reverse()) await env.controlPlane.requestJson('DELETE', `${collection}/${HOLD_POLICY}`);
    await cleanUp([['tenant-a', 'api-1']]);
  }, TEST_TIMEOUT_MS);
});
