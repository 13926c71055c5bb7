// Builds the benchmark's cluster: tenant namespaces (with a RoleBinding that
// makes the bench tenant their admin), infrastructure namespaces with a
// HostDeployPolicy admitting every tenant namespace, BareMetalHosts with
// realistic hardware written through the status subresource (available, as
// baremetal-operator leaves an inspected host), and HostClaims created through
// the aggregator, of which `hostsBound` select the `pool=a` hosts and are
// bound by the binder; the others select a pool with no host and stay
// unbound (NoBareMetalHost). The `pool=b` hosts stay free: every tenant sees
// them as HardwareData, and the binding figure binds new claims to them.
import { createHash } from 'node:crypto';
import type { BenchConfig } from './config.js';
import { forEachConcurrently, type H2Client, type H2Request } from './h2.js';

export const CLAIMS = '/apis/tenancy.metal3.io/v1alpha1';
export const METAL3 = '/apis/metal3.io/v1alpha1';
const STORAGE_NAMESPACE = 'hostclaim-system';
export const RECORDS = `/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/${STORAGE_NAMESPACE}/hostclaimrecords`;
export const NAMESPACE_LABEL = 'infra.tenancy.metal3.io/namespace';
export const POOL_LABEL = 'bench.metal3.io/pool';
export const HALF_LABEL = 'bench.metal3.io/half';
export const BATCH_LABEL = 'bench.metal3.io/batch';
export const TENANT_USER = 'bench-tenant';
const TENANT_LABEL = 'bench.metal3.io/tenant';

export function tenantNamespace(index: number): string {
  return `bench-t-${index.toString().padStart(4, '0')}`;
}

export function hostNamespace(index: number): string {
  return `bench-infra-${index.toString().padStart(2, '0')}`;
}

export interface HostRef {
  readonly namespace: string;
  readonly name: string;
}

export function host(config: BenchConfig, index: number): HostRef {
  return { namespace: hostNamespace(index % config.hostNamespaces), name: `host-${index.toString().padStart(5, '0')}` };
}

/** Hosts 0..hostsBound-1 are pool a (bound in setup), the rest pool b (free). */
export function hostPool(config: BenchConfig, index: number): 'a' | 'b' {
  return index < config.hostsBound ? 'a' : 'b';
}

/** Claim j of namespace k selects pool a when j·namespaces + k < hostsBound: exactly hostsBound claims, spread over every namespace. */
export function claimSelectsBoundPool(config: BenchConfig, namespaceIndex: number, claimIndex: number): boolean {
  return claimIndex * config.namespaces + namespaceIndex < config.hostsBound;
}

export interface SetupTimes {
  namespacesMs: number;
  hostsMs: number;
  /** Starting hostclaim-apiserver with every host in place until /readyz. */
  serverStartMs: number;
  claimsMs: number;
  bindingMs: number;
  totalMs: number;
  /** Where the time went: CPU seconds of each process during each step. */
  steps: SetupStep[];
}

export interface CpuReading {
  readonly controlPlane: number;
  /** Undefined while hostclaim-apiserver is stopped. */
  readonly server: { readonly pid: number; readonly seconds: number } | undefined;
  readonly client: number;
}

export interface SetupStep {
  readonly step: string;
  readonly seconds: number;
  readonly cpuSeconds: { readonly controlPlane: number; readonly server: number; readonly client: number };
}

export interface SetupHooks {
  /** Stops hostclaim-apiserver while the hosts are created, and starts it again. */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  cpu(): Promise<CpuReading>;
}

const RETRIABLE = new Set([429, 500, 502, 503, 504]);
const MAX_ATTEMPTS = 12;

/** A write that retries throttling and transient errors (APF 429s are expected at this concurrency); 409 on a create is success (an earlier attempt landed). */
export async function write(client: H2Client, request: H2Request): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let failure: string;
    try {
      const response = await client.request({ ...request, headers: { 'content-type': 'application/json', ...request.headers } });
      if (response.status >= 200 && response.status < 300) return;
      if (response.status === 409 && request.method === 'POST') return;
      failure = `${response.status} ${response.body.toString('utf8').slice(0, 300)}`;
      if (!RETRIABLE.has(response.status)) throw new Error(`${request.method ?? 'GET'} ${request.path}: ${failure}`);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith(`${request.method ?? 'GET'} ${request.path}:`)) throw error;
      failure = String(error);
    }
    if (attempt >= MAX_ATTEMPTS) throw new Error(`${request.method ?? 'GET'} ${request.path}: gave up after ${attempt} attempts: ${failure}`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 5000)));
  }
}

function post(client: H2Client, path: string, body: unknown): Promise<void> {
  return write(client, { method: 'POST', path, body: JSON.stringify(body) });
}

/**
 * The direct side of a tenant's reads and watches is the same requester as
 * ours: the tenant may read (and, for the watch figure's writes, patch) the
 * backing records. As the admin, the direct side would be exempt from API
 * Priority and Fairness and short-circuit RBAC, which a tenant using a CRD
 * is not; our requests pay both in kube-apiserver before being proxied.
 */
async function directReadsAsTheTenant(admin: H2Client): Promise<void> {
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${STORAGE_NAMESPACE}`;
  const name = 'bench-tenant-records';
  await post(admin, `${rbac}/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace: STORAGE_NAMESPACE },
    rules: [{ apiGroups: ['infra.tenancy.metal3.io'], resources: ['hostclaimrecords'], verbs: ['get', 'list', 'watch', 'patch'] }],
  });
  await post(admin, `${rbac}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: STORAGE_NAMESPACE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: TENANT_USER }],
  });
}

export interface ScenarioClients {
  readonly admin: H2Client;
  readonly tenant: H2Client;
}

/**
 * hostclaim-apiserver is stopped while the hosts are created: every host
 * event makes the server recompute HardwareData for every tenant namespace,
 * which cost it as much CPU as kube-apiserver spent on the writes and halved
 * the setup rate on 2 cores. Started afterwards, it reads every host once;
 * the claims are then created through it, as tenants would.
 */
export async function buildScenario(config: BenchConfig, clients: ScenarioClients, hooks: SetupHooks, log: (line: string) => void): Promise<SetupTimes> {
  const { admin, tenant } = clients;
  const concurrency = config.setupConcurrency;
  const steps: SetupStep[] = [];
  const step = async (name: string, work: () => Promise<void>): Promise<number> => {
    const before = await hooks.cpu();
    const started = performance.now();
    await work();
    const milliseconds = performance.now() - started;
    const after = await hooks.cpu();
    const serverBefore = before.server !== undefined && before.server.pid === after.server?.pid ? before.server.seconds : 0;
    const cpuSeconds = { controlPlane: after.controlPlane - before.controlPlane, server: (after.server?.seconds ?? serverBefore) - serverBefore, client: after.client - before.client };
    steps.push({ step: name, seconds: milliseconds / 1000, cpuSeconds });
    log(`setup: ${name} in ${(milliseconds / 1000).toFixed(1)} s (CPU s: control plane ${cpuSeconds.controlPlane.toFixed(1)}, server ${cpuSeconds.server.toFixed(1)}, bench ${cpuSeconds.client.toFixed(1)})`);
    return milliseconds;
  };
  const tenants = Array.from({ length: config.namespaces }, (_, i) => tenantNamespace(i));
  const infra = Array.from({ length: config.hostNamespaces }, (_, i) => hostNamespace(i));

  const namespacesMs = await step(`${tenants.length + infra.length} namespaces, RoleBindings, policies`, async () => {
    await forEachConcurrently([...infra, ...tenants], concurrency, async (name) => {
      const labels = name.startsWith('bench-t-') ? { [TENANT_LABEL]: 'true' } : {};
      await post(admin, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    });
    await forEachConcurrently(tenants, concurrency, (namespace) =>
      post(admin, `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'bench-tenant-admin', namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: TENANT_USER }],
      }),
    );
    await directReadsAsTheTenant(admin);
    await forEachConcurrently(infra, concurrency, (namespace) =>
      post(admin, `${METAL3}/namespaces/${namespace}/hostdeploypolicies`, {
        apiVersion: 'metal3.io/v1alpha1',
        kind: 'HostDeployPolicy',
        metadata: { name: 'tenants', namespace },
        spec: { hostClaimNamespaces: { hasLabels: [{ name: TENANT_LABEL, value: 'true' }] } },
      }),
    );
  });

  await hooks.stopServer();
  const hostsMs = await step(`${config.hosts} BareMetalHosts (create + status), server stopped`, async () => {
    let created = 0;
    await forEachConcurrently(
      Array.from({ length: config.hosts }, (_, i) => i),
      concurrency,
      async (index) => {
        await createHost(admin, config, index);
        if (++created % 1000 === 0) log(`setup: ${created}/${config.hosts} BareMetalHosts`);
      },
    );
  });
  const serverStartMs = await step('hostclaim-apiserver start', () => hooks.startServer());

  const claims = tenants.flatMap((namespace, k) => Array.from({ length: config.claimsPerNamespace }, (_, j) => ({ namespace, k, j })));
  const claimsMs = await step(`${claims.length} HostClaims through the aggregator`, async () => {
    let created = 0;
    await forEachConcurrently(claims, concurrency, async ({ namespace, k, j }) => {
      const pool = claimSelectsBoundPool(config, k, j) ? 'a' : 'none';
      await post(tenant, `${CLAIMS}/namespaces/${namespace}/hostclaims`, newClaim(`c-${j}`, { [HALF_LABEL]: j % 2 === 0 ? 'even' : 'odd' }, pool));
      if (++created % 1000 === 0) log(`setup: ${created}/${claims.length} HostClaims`);
    });
  });
  const bindingMs = await step(`binder binding ${config.hostsBound} claims (after the last create)`, () =>
    waitForBoundHosts(admin, config.hostsBound, 'a', config.setupBindTimeoutMs, log),
  );
  const totalMs = namespacesMs + hostsMs + serverStartMs + claimsMs + bindingMs;
  return { namespacesMs, hostsMs, serverStartMs, claimsMs, bindingMs, totalMs, steps };
}

export function newClaim(name: string, labels: Record<string, string>, pool: string): unknown {
  return {
    apiVersion: 'tenancy.metal3.io/v1alpha1',
    kind: 'HostClaim',
    metadata: { name, labels: { app: 'bench', ...labels } },
    spec: { poweredOn: false, hostSelector: { matchLabels: { [POOL_LABEL]: pool } } },
  };
}

interface TableList {
  rows?: { cells: unknown[] }[];
  metadata: { continue?: string };
}

/** How many hosts of `pool` carry a consumerRef, read as Tables (the Consumer column) so polling stays cheap. */
export async function countBoundHosts(admin: H2Client, pool: string): Promise<number> {
  let count = 0;
  let token = '';
  do {
    const page = await admin.json<TableList>({
      path: `${METAL3}/baremetalhosts?labelSelector=${encodeURIComponent(`${POOL_LABEL}=${pool}`)}&limit=1000${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}`,
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    // Columns: Name, Status(priority 1), State, Consumer, ...; the Consumer cell is the fourth.
    count += (page.rows ?? []).filter((row) => typeof row.cells[3] === 'string' && row.cells[3] !== '').length;
    token = page.metadata.continue ?? '';
  } while (token !== '');
  return count;
}

async function waitForBoundHosts(admin: H2Client, expected: number, pool: string, timeoutMs: number, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastLogged = 0;
  for (;;) {
    const bound = await countBoundHosts(admin, pool);
    if (bound >= expected) return;
    if (Date.now() > deadline) throw new Error(`setup: only ${bound} of ${expected} pool-${pool} hosts were bound within ${timeoutMs} ms`);
    if (Date.now() - lastLogged > 15_000) {
      log(`setup: ${bound}/${expected} hosts bound`);
      lastLogged = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, expected > 1000 ? 3000 : 500));
  }
}

async function createHost(admin: H2Client, config: BenchConfig, index: number): Promise<void> {
  const { namespace, name } = host(config, index);
  const mac = macAddress(`${namespace}/${name}`, 0);
  await post(admin, `${METAL3}/namespaces/${namespace}/baremetalhosts`, {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name, namespace, labels: { [POOL_LABEL]: hostPool(config, index), 'bench.metal3.io/rack': `r${index % 40}`, role: 'worker' } },
    spec: {
      online: false,
      bootMACAddress: mac,
      bootMode: 'UEFI',
      bmc: { address: `redfish+https://10.${(index >> 8) & 255}.${index & 255}.1/redfish/v1/Systems/1`, credentialsName: `${name}-bmc-secret` },
      rootDeviceHints: { deviceName: '/dev/nvme0n1' },
    },
  });
  const status = {
    operationalStatus: 'OK',
    errorCount: 0,
    errorMessage: '',
    poweredOn: false,
    hardwareProfile: 'unknown',
    lastUpdated: new Date().toISOString(),
    provisioning: { state: 'available', ID: uuidFrom(`${namespace}/${name}`), bootMode: 'UEFI', image: { url: '' } },
    goodCredentials: { credentials: { name: `${name}-bmc-secret`, namespace }, credentialsVersion: '1' },
    hardware: hardware(name, index, mac),
  };
  await write(admin, {
    method: 'PATCH',
    path: `${METAL3}/namespaces/${namespace}/baremetalhosts/${name}/status`,
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status }),
  });
}

const GB = 1_000_000_000;

/** What an Ironic inspection reports for a dual-socket server: four NICs, four disks, CPU, RAM, firmware. */
function hardware(name: string, index: number, bootMac: string): unknown {
  const serial = `BN${index.toString().padStart(6, '0')}`;
  return {
    systemVendor: { manufacturer: index % 3 === 0 ? 'HPE' : 'Dell Inc.', productName: index % 3 === 0 ? 'ProLiant DL380 Gen11' : 'PowerEdge R760', serialNumber: serial },
    firmware: { bios: { vendor: index % 3 === 0 ? 'HPE' : 'Dell Inc.', version: `2.${index % 7}.1`, date: '2025-02-14' } },
    ramMebibytes: 131_072 * (1 + (index % 4)),
    cpu: {
      arch: 'x86_64',
      model: 'Intel(R) Xeon(R) Gold 6430 CPU @ 2.10GHz',
      clockMegahertz: 2100,
      count: 64 * (1 + (index % 2)),
      flags: ['aes', 'avx', 'avx2', 'avx512bw', 'avx512f', 'fma', 'sse4_2', 'vmx'],
    },
    nics: [0, 1, 2, 3].map((port) => ({
      name: port < 2 ? `eno${port + 1}` : `ens2f${port - 2}`,
      model: port < 2 ? '0x8086 0x1593' : '0x15b3 0x101d',
      mac: port === 0 ? bootMac : macAddress(name, port),
      ...(port < 2 ? { ip: `10.${100 + port}.${(index >> 8) & 255}.${index & 255}` } : {}),
      speedGbps: port < 2 ? 25 : 100,
      vlanId: 0,
      pxe: port === 0,
    })),
    storage: [0, 1, 2, 3].map((disk) => ({
      name: `/dev/nvme${disk}n1`,
      type: disk === 0 ? 'SSD' : 'NVME',
      sizeBytes: (disk === 0 ? 480 : 3840) * GB,
      rotational: false,
      model: disk === 0 ? 'Dell BOSS-N1' : 'Samsung PM1733',
      serialNumber: `${serial}-D${disk}`,
      wwn: `0x5002538${index.toString(16).padStart(6, '0')}${disk}`,
      vendor: disk === 0 ? 'Dell' : 'Samsung',
      hctl: `${disk}:0:0:0`,
    })),
    hostname: `${name}.bench.example`,
  };
}

function macAddress(seed: string, port: number): string {
  const bytes = createHash('sha256').update(`${seed}#${port}`).digest().subarray(0, 5);
  return ['02', ...[...bytes].map((byte) => byte.toString(16).padStart(2, '0'))].join(':');
}

function uuidFrom(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
