/**
 * Per-requester projection through the real aggregator, with the real
 * baremetal-operator (fixture provisioner): an infrastructure admin (a user
 * who may `get` BareMetalHosts in `infra`, and read the tenant's objects)
 * sees a failed host's own error text on the claim, and a HardwareData's
 * host labels, annotations and whole inventory; tenant-a sees the
 * sanitized claim and the tenant inventory, in GET, LIST, Table and watch.
 * Nobody sees the BMC address or credentials. The host error is real: the
 * host's BMC credentials are pointed at a Secret that does not exist, which
 * baremetal-operator reports as a registration error naming the Secret.
 */
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBareMetalHost, getBareMetalHost, patchBareMetalHost, waitForProvisioningState } from '../controlplane/baremetal-operator.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { sampleInventory, type HardwareDetails } from '../controlplane/inventory.js';
import { pollUntil } from '../controlplane/wait.js';

const binDir = inject('controlPlaneBinDir');
const INFRA = 'infra';
const SETUP_TIMEOUT_MS = 20 * 60_000;
const STATE_TIMEOUT_MS = 90_000;
const group = '/apis/tenancy.metal3.io/v1alpha1';
/** The management network address createBareMetalHost gives every host's BMC. */
const BMC_IP = '192.168.222.1';
/** What node-0's BMC credentials are switched to: a Secret that does not exist. */
const MISSING_SECRET = 'node-0-missing-secret';
const SANITIZED = 'The host could not be registered with its management controller. The infrastructure administrator can see the details.';

type Who = 'tenant-a' | 'infra-admin';

let env: DevEnvironment;
let infraAdminKubeconfig: string;

const sourceInventory = sampleInventory[0]?.hardware;
if (sourceInventory === undefined) throw new Error('no sample inventory');
const [firstNic, secondNic] = sourceInventory.nics;
if (firstNic === undefined || secondNic === undefined) throw new Error('the sample host has two NICs');
/** host-0's inventory with LLDP data on its first NIC: everything an inspection reports. */
const inventory: HardwareDetails = {
  ...sourceInventory,
  nics: [{ ...firstNic, lldp: { switchID: 'c8:4b:d6:00:00:01', portID: 'Ethernet1/7', switchSystemName: 'tor-r7-a' } }, secondNic],
};
/** What tenants see of it by default: no LLDP data, serial numbers or firmware. */
const tenantInventory = {
  systemVendor: { manufacturer: inventory.systemVendor.manufacturer, productName: inventory.systemVendor.productName },
  ramMebibytes: inventory.ramMebibytes,
  cpu: inventory.cpu,
  nics: [firstNic, secondNic],
  storage: inventory.storage.map(({ serialNumber: _serialNumber, ...disk }) => disk),
  hostname: inventory.hostname,
};

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

interface HostClaim {
  metadata: { name: string };
  status?: { conditions?: Condition[]; bareMetalHost?: { namespace: string; name: string } };
}

interface HardwareData {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { hardware?: Record<string, unknown> };
}

beforeAll(async () => {
  env = await startDevEnvironment({
    workDir: path.join(os.tmpdir(), `projection-${process.pid}`),
    serverEntry: 'dist/src/main.js',
    binDir,
    bareMetalOperator: true,
  });
  infraAdminKubeconfig = await env.controlPlane.userKubeconfig('infra-admin', [], path.join(env.workDir, 'infra-admin.kubeconfig'));
  const annotations = { 'example.com/asset-tag': 'AT-1001', 'example.com/oob-note': `console at ${BMC_IP}` };
  const labels = { role: 'worker', 'example.com/rack': 'r7' };
  await Promise.all([
    createBareMetalHost(env.controlPlane, { namespace: INFRA, name: 'node-0', labels: { ...labels, slot: 'a' }, annotations, hardware: inventory, bootMACAddress: firstNic.mac }),
    createBareMetalHost(env.controlPlane, { namespace: INFRA, name: 'node-1', labels: { ...labels, slot: 'b' }, annotations, hardware: inventory, bootMACAddress: firstNic.mac }),
  ]);
  await Promise.all(['node-0', 'node-1'].map((name) => waitForProvisioningState(env.controlPlane, INFRA, name, 'available', STATE_TIMEOUT_MS)));
  await admin(['apply', '-f', '-'], JSON.stringify(policy({})));
  // The infrastructure admin: reads BareMetalHosts in infra and (view) tenant-a's objects; no cluster-wide rights.
  await admin(['-n', INFRA, 'create', 'role', 'host-reader', '--verb=get,list,watch', '--resource=baremetalhosts.metal3.io']);
  await admin(['-n', INFRA, 'create', 'rolebinding', 'infra-admin-hosts', '--role=host-reader', '--user=infra-admin']);
  await admin(['-n', 'tenant-a', 'create', 'rolebinding', 'infra-admin-view', '--clusterrole=view', '--user=infra-admin']);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await env.stop();
});

function policy(annotations: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'HostDeployPolicy',
    metadata: { name: 'tenants', namespace: INFRA, annotations: { 'tenancy.metal3.io/shared-labels': 'role', ...annotations } },
    spec: { hostClaimNamespaces: { names: ['tenant-a'] } },
  };
}

async function run(who: Who | 'admin', args: string[], stdin?: string): Promise<string> {
  const kubeconfig = who === 'admin' ? env.adminKubeconfigPath : who === 'infra-admin' ? infraAdminKubeconfig : env.tenantKubeconfigPaths[who];
  const result = await env.controlPlane.kubectl(args, { kubeconfig, ...(stdin === undefined ? {} : { stdin }) });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} as ${who} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

function admin(args: string[], stdin?: string): Promise<string> {
  return run('admin', args, stdin);
}

function raw<T>(who: Who, url: string): Promise<T> {
  return run(who, ['get', '--raw', url]).then((text) => JSON.parse(text) as T);
}

/** The objects of a short watch (initial ADDEDs of the selection, then the timeout). */
async function watchObjects<T>(who: Who, url: string): Promise<T[]> {
  const text = await run(who, ['get', '--raw', `${url}${url.includes('?') ? '&' : '?'}watch=1&timeoutSeconds=2`]);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; object: T })
    .filter((event) => event.type === 'ADDED')
    .map((event) => event.object);
}

function provisioned(claim: HostClaim | undefined): Condition | undefined {
  return claim?.status?.conditions?.find((c) => c.type === 'Provisioned');
}

/** Everything either requester could read, to prove no BMC detail is in any of it. */
function expectNoBmcDetails(text: string): void {
  for (const secret of [BMC_IP, 'redfish', MISSING_SECRET, 'node-0-bmc-secret', 'node-1-bmc-secret', 'goodCredentials', 'credentialsName']) expect(text).not.toContain(secret);
}

describe('HardwareData', () => {
  const hardwareData = (who: Who): Promise<HardwareData> => raw<HardwareData>(who, `${group}/namespaces/tenant-a/hardwaredata/infra.node-1`);

  it('shows tenants the default inventory and the shared labels, infrastructure admins the host labels, annotations and whole inventory', async () => {
    const host = await run('infra-admin', ['-n', INFRA, 'get', 'baremetalhosts.metal3.io', 'node-1', '-o', 'json']);
    const hostAnnotations = (JSON.parse(host) as HardwareData).metadata.annotations ?? {};
    const bootMac = { 'tenancy.metal3.io/boot-mac-address': firstNic.mac };

    const tenant = await pollUntil('tenant-a to see infra.node-1', () => hardwareData('tenant-a').catch(() => undefined), { timeoutMs: 60_000, intervalMs: 500 });
    expect(tenant.metadata.labels).toEqual({ role: 'worker' });
    expect(tenant.metadata.annotations).toEqual(bootMac);
    expect(tenant.spec).toEqual({ hardware: tenantInventory });

    const infraAdmin = await hardwareData('infra-admin');
    expect(infraAdmin.metadata.labels).toEqual({ 'example.com/rack': 'r7', role: 'worker', slot: 'b' });
    // Every host annotation but those quoting the BMC (the note naming its IP; BMO's own copies of spec and status).
    const expectedAnnotations = Object.fromEntries(
      Object.entries(hostAnnotations).filter(([key, value]) => !value.includes(BMC_IP) && !value.includes('node-1-bmc-secret') && key !== 'baremetalhost.metal3.io/status' && key !== 'kubectl.kubernetes.io/last-applied-configuration'),
    );
    expect(infraAdmin.metadata.annotations).toEqual({ ...expectedAnnotations, ...bootMac });
    expect(infraAdmin.metadata.annotations?.['example.com/asset-tag']).toBe('AT-1001');
    expect(infraAdmin.metadata.annotations).not.toHaveProperty('example.com/oob-note');
    expect(infraAdmin.spec).toEqual({ hardware: inventory });

    // LIST and watch give each requester the same forms.
    const lists = await Promise.all((['tenant-a', 'infra-admin'] as const).map((who) => raw<{ items: HardwareData[] }>(who, `${group}/namespaces/tenant-a/hardwaredata?fieldSelector=metadata.name%3Dinfra.node-1`)));
    expect(lists.map((list) => list.items)).toEqual([[tenant], [infraAdmin]]);
    const watched = await Promise.all((['tenant-a', 'infra-admin'] as const).map((who) => watchObjects<HardwareData>(who, `${group}/namespaces/tenant-a/hardwaredata?fieldSelector=metadata.name%3Dinfra.node-1`)));
    expect(watched).toEqual([[tenant], [infraAdmin]]);
    expectNoBmcDetails(JSON.stringify([tenant, infraAdmin, lists, watched]));
  });

  it('shows tenants LLDP data and serial numbers once a policy admitting them shares them', async () => {
    await admin(['apply', '-f', '-'], JSON.stringify(policy({ 'tenancy.metal3.io/shared-inventory': 'lldp,serialNumbers' })));
    const shared = { ...tenantInventory, systemVendor: inventory.systemVendor, nics: inventory.nics, storage: inventory.storage };
    let last: HardwareData | undefined;
    await pollUntil(
      'tenant-a to see the shared sections',
      async () => {
        last = await hardwareData('tenant-a');
        return isDeepStrictEqual(last.spec, { hardware: shared }) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, describeFailure: () => JSON.stringify(last?.spec) },
    );
    expect(last?.spec).toEqual({ hardware: shared });
    expect(last?.spec.hardware).not.toHaveProperty('firmware');
    expect(last?.metadata.labels).toEqual({ role: 'worker' });
    await admin(['apply', '-f', '-'], JSON.stringify(policy({})));
    await pollUntil('tenant-a to see the default again', async () => (isDeepStrictEqual((await hardwareData('tenant-a')).spec, { hardware: tenantInventory }) ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
  });
});

describe('a claim whose host failed', () => {
  const claimUrl = `${group}/namespaces/tenant-a/hostclaims/broken`;
  let rawError = '';
  /** The Provisioned messages each requester's watch, open before the host failed, received in MODIFIED events. */
  const liveMessages: Record<Who, string[]> = { 'tenant-a': [], 'infra-admin': [] };
  const liveWatches: AbortController[] = [];

  /** A client-go style watch of the claim as `who`, open until aborted. */
  async function watchLive(who: Who): Promise<void> {
    const config = new KubeConfig();
    config.loadFromFile(who === 'infra-admin' ? infraAdminKubeconfig : env.tenantKubeconfigPaths[who]);
    const controller = await new Watch(config).watch(
      `${group}/namespaces/tenant-a/hostclaims`,
      { fieldSelector: 'metadata.name=broken' },
      (type: string, claim: HostClaim) => {
        const message = provisioned(claim)?.message;
        if (type === 'MODIFIED' && message !== undefined) liveMessages[who].push(message);
      },
      () => undefined,
    );
    liveWatches.push(controller);
  }

  beforeAll(async () => {
    const claim = { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'broken' }, spec: { poweredOn: false, hostSelector: { matchLabels: { slot: 'a' } } } };
    await run('tenant-a', ['-n', 'tenant-a', 'create', '-f', '-'], JSON.stringify(claim));
    await pollUntil('the claim to be bound to node-0', async () => ((await raw<HostClaim>('tenant-a', claimUrl)).status?.bareMetalHost?.name === 'node-0' ? true : undefined), {
      timeoutMs: STATE_TIMEOUT_MS,
      intervalMs: 250,
    });
    await Promise.all([watchLive('tenant-a'), watchLive('infra-admin')]);
    await patchBareMetalHost(env.controlPlane, INFRA, 'node-0', { spec: { bmc: { credentialsName: MISSING_SECRET } } });
    const host = await pollUntil(
      'baremetal-operator to report the registration error',
      async () => {
        const current = await getBareMetalHost(env.controlPlane, INFRA, 'node-0');
        return (current.status?.errorMessage ?? '') === '' ? undefined : current;
      },
      { timeoutMs: STATE_TIMEOUT_MS, intervalMs: 250 },
    );
    rawError = host.status?.errorMessage ?? '';
    let last: HostClaim | undefined;
    await pollUntil(
      'the infrastructure admin to see the host error on the claim',
      async () => {
        last = await raw<HostClaim>('infra-admin', claimUrl);
        return provisioned(last)?.reason === 'HostError' ? true : undefined;
      },
      { timeoutMs: STATE_TIMEOUT_MS, intervalMs: 250, describeFailure: () => JSON.stringify(last?.status) },
    );
  }, SETUP_TIMEOUT_MS);

  afterAll(() => {
    for (const controller of liveWatches) controller.abort();
  });

  it('is a registration error naming the credentials Secret on the host', () => {
    expect(rawError).toBe(`BMC CredentialsName secret doesn't exist The BMC secret ${INFRA}/${MISSING_SECRET} does not exist`);
  });

  it('shows the infrastructure admin the host error text (credentials name replaced) and tenant-a the sanitized message in GET and LIST', async () => {
    const adminMessage = rawError.split(MISSING_SECRET).join('<BMC credentials>');
    expect(adminMessage).toBe(`BMC CredentialsName secret doesn't exist The BMC secret ${INFRA}/<BMC credentials> does not exist`);
    const [tenant, infraAdmin] = await Promise.all([raw<HostClaim>('tenant-a', claimUrl), raw<HostClaim>('infra-admin', claimUrl)]);
    expect(provisioned(tenant)).toMatchObject({ status: 'False', reason: 'HostError', message: SANITIZED });
    expect(provisioned(infraAdmin)).toMatchObject({ status: 'False', reason: 'HostError', message: adminMessage });
    // Apart from that message, both see the same object.
    const withoutProvisioned = (claim: HostClaim): unknown => ({ ...claim, status: { ...claim.status, conditions: claim.status?.conditions?.filter((c) => c.type !== 'Provisioned') } });
    expect(withoutProvisioned(infraAdmin)).toEqual(withoutProvisioned(tenant));

    const lists = await Promise.all((['tenant-a', 'infra-admin'] as const).map((who) => raw<{ items: HostClaim[] }>(who, `${group}/namespaces/tenant-a/hostclaims?fieldSelector=metadata.name%3Dbroken`)));
    expect(lists.map((list) => list.items.map((claim) => provisioned(claim)?.message))).toEqual([[SANITIZED], [adminMessage]]);
    expectNoBmcDetails(JSON.stringify([tenant, infraAdmin, lists]));
    expect(JSON.stringify([tenant, lists[0]])).not.toContain('CredentialsName');
  });

  it('shows each its message in the Table (kubectl get -o wide asks for a meta.k8s.io Table)', async () => {
    const adminMessage = rawError.split(MISSING_SECRET).join('<BMC credentials>');
    const wide = await Promise.all((['tenant-a', 'infra-admin'] as const).map((who) => run(who, ['-n', 'tenant-a', 'get', 'hostclaims.tenancy.metal3.io', 'broken', '-o', 'wide'])));
    for (const [output, message] of [
      [wide[0], SANITIZED],
      [wide[1], adminMessage],
    ] as const) {
      const [header, row, ...rest] = (output ?? '').trimEnd().split('\n');
      expect(header).toMatch(/^NAME\s+HOST\s+READY\s+POWERED\s+IMAGE\s+FAILURE DOMAIN\s+HOST ERROR\s+AGE$/);
      expect(rest).toEqual([]);
      // No image and no failure domain: empty cells.
      expect(row).toMatch(new RegExp(`^broken\\s+node-0\\s+False\\s+false\\s+${escapeRegExp(message)}\\s+\\S+$`));
    }
  });

  it('sends each its message in watch events (JSON and Table), live and initial', async () => {
    const adminMessage = rawError.split(MISSING_SECRET).join('<BMC credentials>');
    await pollUntil(
      'both live watches to receive the host error',
      () => Promise.resolve(liveMessages['tenant-a'].includes(SANITIZED) && liveMessages['infra-admin'].includes(adminMessage) ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 100, describeFailure: () => JSON.stringify(liveMessages) },
    );
    expect(liveMessages['tenant-a']).not.toContain(adminMessage);
    expect(liveMessages['infra-admin']).not.toContain(SANITIZED);
    expectNoBmcDetails(JSON.stringify(liveMessages));
    const url = `${group}/namespaces/tenant-a/hostclaims?fieldSelector=metadata.name%3Dbroken`;
    const watched = await Promise.all((['tenant-a', 'infra-admin'] as const).map((who) => watchObjects<HostClaim>(who, url)));
    expect(watched.map((claims) => claims.map((claim) => provisioned(claim)?.message))).toEqual([[SANITIZED], [adminMessage]]);
    expectNoBmcDetails(JSON.stringify(watched));
    // kubectl ends the watch at the request timeout (and says so on stderr): the rows are what matters.
    const tableWatches = await Promise.all(
      (['tenant-a', 'infra-admin'] as const).map(async (who) => {
        const kubeconfig = who === 'infra-admin' ? infraAdminKubeconfig : env.tenantKubeconfigPaths[who];
        return (await env.controlPlane.kubectl(['-n', 'tenant-a', 'get', 'hostclaims.tenancy.metal3.io', 'broken', '-o', 'wide', '--watch', '--request-timeout=3s'], { kubeconfig })).stdout;
      }),
    );
    expect(tableWatches[0]).toContain(SANITIZED);
    expect(tableWatches[0]).not.toContain('CredentialsName');
    expect(tableWatches[1]).toContain(adminMessage);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
