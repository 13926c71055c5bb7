/**
 * The flow Cluster API Provider Metal3 runs in HostClaim mode, by a Go
 * client (test/goclient/capm3flow: controller-runtime, the repository's Go
 * API package api/go/tenancyv1alpha1 over baremetal-operator v0.13.2's
 * types) against the real aggregator, binder and baremetal-operator. The
 * client has only what CAPM3's identityRef gives it: a kubeconfig with a
 * ServiceAccount token of tenant-a, bound there to the `edit` role the
 * product extends for tenants (deploy/base/aggregated-roles.yaml).
 *
 * Inventory (test/controlplane/inventory.ts): host-0 and host-1 are the gold
 * workers, host-2 silver. tenant-b holds host-0 while the Machine is
 * provisioned, so the Machine gets host-1; tenant-b lets host-0 go before
 * the scale-up, so host-0 is free, unlabelled and first in name order when
 * the pool's next claim is bound: getting host-1 back is node reuse, not
 * chance.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runBuildScript } from '../controlplane/binaries.js';
import { createSampleInventory, getBareMetalHost, waitForProvisioningState } from '../controlplane/baremetal-operator.js';
import { startDevEnvironment, TENANTS, type DevEnvironment } from '../controlplane/environment.js';
import { sampleInventory } from '../controlplane/inventory.js';
import { repoPath } from '../controlplane/paths.js';
import { pollUntil } from '../controlplane/wait.js';
import { runGoProgram, summaryOf } from '../support/go-program.js';

const binDir = inject('controlPlaneBinDir');
const INFRA = 'infra';
const TENANT = 'tenant-a';
const SERVICE_ACCOUNT = 'capm3';
const POOL = 'workers';
const NODE_REUSE = 'infrastructure.cluster.x-k8s.io/node-reuse';
const SETUP_TIMEOUT_MS = 20 * 60_000;
const STATE_TIMEOUT_MS = 120_000;
const RUN_TIMEOUT_MS = 300_000;

/** The JSON line hostclaim-capm3flow prints (see capm3flow/summary.go). */
interface FlowSummary {
  ok: boolean;
  phase: 'provision' | 'reuse';
  identity: string;
  claimable: Record<string, string>;
  host?: {
    claim: string;
    hardwareData: string;
    hostname: string;
    bootMACAddress: string;
    nics: { name: string; mac: string; ip?: string }[];
    addresses: { type: string; address: string }[];
  };
  nodeReuseAfterUpdate: string;
  timings: { createToReady: number; rebootPowerOff?: number; rebootPowerOn?: number; deleteToRelease?: number };
  checks: { name: string; ok: boolean; message?: string }[];
  failures: string[];
}

const PROVISION_CHECKS = [
  'setup',
  'who am I (SelfSubjectReview)',
  'the identity reaches no other namespace (403 on its HostClaims and HardwareData)',
  'list claimable HardwareData with boot MACs',
  'create the user-data, meta-data and network-data Secrets',
  'create the HostClaim (image, data, hostSelector, failureDomain, consumerRef, nodeReuse)',
  'claim becomes Ready',
  "read the Machine's addresses and boot MAC from HardwareData",
  'remediation reboot (reboot.metal3.io/<key>) powers the host off and on',
  'scale down: delete the claim, wait until its host is released',
];
const REUSE_CHECKS = [
  'setup',
  'who am I (SelfSubjectReview)',
  'create the user-data, meta-data and network-data Secrets',
  'create the HostClaim (image, data, hostSelector, failureDomain, consumerRef, nodeReuse)',
  'claim becomes Ready',
  "read the Machine's addresses and boot MAC from HardwareData",
  'the same host came back through nodeReuse',
];

let env: DevEnvironment;
let capm3flow: string;
let identityKubeconfig: string;

async function kubectl(kubeconfig: string, args: string[], stdin?: string): Promise<string> {
  const result = await env.controlPlane.kubectl(args, { kubeconfig, ...(stdin === undefined ? {} : { stdin }) });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** CAPM3's identityRef: a ServiceAccount of the tenant namespace, bound to `edit` there, and a TokenRequest token. */
async function identityRefKubeconfig(): Promise<string> {
  await env.controlPlane.requestJson('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${TENANT}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${SERVICE_ACCOUNT}-edit` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: TENANT }],
  });
  return env.controlPlane.serviceAccountKubeconfig(TENANT, SERVICE_ACCOUNT, path.join(env.workDir, 'capm3-identity.kubeconfig'), 3600);
}

async function runFlow(phase: 'provision' | 'reuse', machine: string, extra: string[] = []): Promise<FlowSummary> {
  const args = [
    `--kubeconfig=${identityKubeconfig}`,
    `--namespace=${TENANT}`,
    `--phase=${phase}`,
    `--machine=${machine}`,
    `--node-reuse=${POOL}`,
    `--in-namespace=${INFRA}`,
    `--match-labels=${JSON.stringify({ role: 'worker', tier: 'gold' })}`,
    '--failure-domain=rack-1',
    '--timeout=240s',
    ...extra,
  ];
  const run = await runGoProgram<FlowSummary>(capm3flow, args, process.env, RUN_TIMEOUT_MS);
  const summary = summaryOf('hostclaim-capm3flow', run);
  const failed = summary.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.message ?? ''}`);
  expect(failed, `hostclaim-capm3flow checks failed:\n${run.stderr}`).toEqual([]);
  expect(summary.checks.map((c) => c.name)).toEqual(phase === 'provision' ? PROVISION_CHECKS : REUSE_CHECKS);
  expect(summary.ok).toBe(true);
  expect(run.code).toBe(0);
  expect(summary.identity).toBe(`system:serviceaccount:${TENANT}:${SERVICE_ACCOUNT}`);
  return summary;
}

/** What the client must have read for `hostName`: that host's inventory values, nothing else. */
function expectedHost(hostName: string, claim: string): FlowSummary['host'] {
  const host = sampleInventory.find((h) => h.name === hostName);
  if (host === undefined) throw new Error(`${hostName} is not in the sample inventory`);
  const { hostname, nics } = host.hardware;
  return {
    claim,
    hardwareData: `${INFRA}.${hostName}`,
    hostname,
    bootMACAddress: host.bootMACAddress,
    nics: nics.map(({ name, mac, ip }) => ({ name, mac, ...(ip === undefined ? {} : { ip }) })),
    addresses: [
      ...nics.flatMap(({ ip }) => (ip === undefined ? [] : [{ type: 'InternalIP', address: ip }])),
      { type: 'Hostname', address: hostname },
      { type: 'InternalDNS', address: hostname },
    ],
  };
}

/** The host's consumerRef (getBareMetalHost's type leaves it out). */
async function consumerOf(hostName: string): Promise<unknown> {
  const host = await env.controlPlane.requestJson<{ spec: { consumerRef?: unknown } }>('GET', `/apis/metal3.io/v1alpha1/namespaces/${INFRA}/baremetalhosts/${hostName}`);
  return host.spec.consumerRef;
}

function bootMAC(hostName: string): string {
  return sampleInventory.find((h) => h.name === hostName)?.bootMACAddress ?? '';
}

beforeAll(async () => {
  // Build first: a failing Go build should not cost a control-plane start.
  capm3flow = await runBuildScript(repoPath('test', 'goclient', 'build.sh'), ['capm3flow']);
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `capm3-flow-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, bareMetalOperator: true });
  await createSampleInventory(env.controlPlane, INFRA, TENANTS, STATE_TIMEOUT_MS);
  identityKubeconfig = await identityRefKubeconfig();
  // tenant-b holds host-0 (the only nvme host) while tenant-a's Machine is provisioned.
  const blocker = { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'blocker' }, spec: { poweredOn: false, hostSelector: { inNamespace: INFRA, matchLabels: { disk: 'nvme' } } } };
  await kubectl(env.tenantKubeconfigPaths['tenant-b'], ['-n', 'tenant-b', 'create', '-f', '-'], JSON.stringify(blocker));
  await pollUntil('tenant-b/blocker to hold host-0', async () => ((await consumerOf('host-0')) === undefined ? undefined : true), {
    timeoutMs: STATE_TIMEOUT_MS,
    intervalMs: 200,
  });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await env.stop();
});

describe('the CAPM3 HostClaim-mode flow, as a Go client with an identityRef kubeconfig', () => {
  it('provisions a Machine, reads its host, remediates and scales down; the pool gets the same host back', async () => {
    const provisioned = await runFlow('provision', 'm-0', ['--foreign-namespace=tenant-b']);
    // The hosts tenant-a may claim, each with its boot MAC; host-0 (held by tenant-b) is invisible.
    expect(provisioned.claimable).toEqual({ [`${INFRA}.host-1`]: bootMAC('host-1'), [`${INFRA}.host-2`]: bootMAC('host-2') });
    expect(provisioned.host).toEqual(expectedHost('host-1', 'm-0'));
    // Full updates with the package's HostClaim type kept spec.nodeReuse.
    expect(provisioned.nodeReuseAfterUpdate).toBe(POOL);
    // The released host is kept for tenant-a's pool.
    expect((await getBareMetalHost(env.controlPlane, INFRA, 'host-1')).metadata.labels?.[NODE_REUSE]).toBe(`${TENANT}.${POOL}`);

    // tenant-b lets host-0 go: a free, unlabelled gold host, first in name order.
    await kubectl(env.tenantKubeconfigPaths['tenant-b'], ['-n', 'tenant-b', 'delete', 'hostclaims.tenancy.metal3.io', 'blocker', '--wait', '--timeout=120s']);
    await waitForProvisioningState(env.controlPlane, INFRA, 'host-0', 'available', STATE_TIMEOUT_MS);
    expect((await getBareMetalHost(env.controlPlane, INFRA, 'host-0')).metadata.labels?.[NODE_REUSE]).toBeUndefined();

    const reused = await runFlow('reuse', 'm-1', [`--expect-hardware-data=${INFRA}.host-1`]);
    expect(reused.host).toEqual(expectedHost('host-1', 'm-1'));
    expect(await consumerOf('host-0')).toBeUndefined();

    console.info(
      `[capm3-flow] create→Ready ${provisioned.timings.createToReady} ms; reboot: off ${provisioned.timings.rebootPowerOff ?? -1} ms, on ${provisioned.timings.rebootPowerOn ?? -1} ms; ` +
        `delete→released ${provisioned.timings.deleteToRelease ?? -1} ms; reuse create→Ready ${reused.timings.createToReady} ms`,
    );
  }, 2 * RUN_TIMEOUT_MS + STATE_TIMEOUT_MS);
});
