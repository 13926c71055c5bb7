/**
 * Dependency faults (issue 10, item 3): kube-apiserver restarted, etcd
 * stopped and restarted, kube-apiserver frozen (SIGSTOP) for 30 s, and
 * baremetal-operator down, one after the other in one environment. During
 * each, requests keep going and every answer is recorded:
 *
 * - directly to the server's port (front-proxy certificate + X-Remote-*, as
 *   the aggregator sends them): with kube-apiserver down or frozen nothing
 *   reaches the server through the aggregator;
 * - through the aggregator while kube-apiserver itself serves (etcd down,
 *   baremetal-operator down), and once it is back after the others.
 *
 * Meanwhile the server stays live (/livez 200 throughout), /readyz turns
 * not ready, and every request gets what it gets without a fault or a
 * retriable Status (503 ServiceUnavailable with Retry-After, 504 Timeout,
 * or kube's own 429 with Retry-After), never a 403 or 404 that blames the
 * requester, never an answer past kube's 60 s request timeout, never
 * infrastructure text. Once the dependency answers again (kube-apiserver
 * ready; a consistent read of kube-apiserver after etcd; SIGCONT), /readyz
 * says ready within 10 s. Watches kept by resuming mirrors (direct and
 * through the aggregator, HostClaims and HardwareData) end equal to a fresh
 * list, with claims written throughout. Claims created and deleted right
 * before each fault are bound and released by the binder across it: each
 * claim ends on exactly one host, no host names a claim that is gone, and
 * the Secret copies are exactly those of the bound claims.
 *
 * The control plane runs without the RBAC audit (ControlPlaneOptions.audit):
 * a restarting kube-apiserver refuses everyone until its RBAC has loaded.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createBareMetalHost, createSampleInventory, waitForProvisioningState } from '../controlplane/baremetal-operator.js';
import { startDevEnvironment, TENANTS, type DevEnvironment, type Tenant } from '../controlplane/environment.js';
import { delay, pollUntil } from '../controlplane/wait.js';
import { describeAnswers, isRetriable, summarizeAnswers, Traffic, type Answer } from '../support/fault-traffic.js';
import { credentialsOf, rawClients, type RawClients, type RawResponse } from '../support/raw-http.js';
import { ResumingWatch } from '../support/resuming-watch.js';

const binDir = inject('controlPlaneBinDir');
const INFRA = 'infra';
const API = '/apis/tenancy.metal3.io/v1alpha1';
const RECORDS = '/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords';
const COPY_OWNER_LABEL = 'infra.tenancy.metal3.io/claim-record-uid';
/** The issue's bound, from the moment the dependency answers again. */
const READY_WITHIN_MS = 10_000;
/** kube-apiserver's default request timeout: no answer may take longer. */
const REQUEST_BOUND_MS = 60_000;
const CLIENT_TIMEOUT_MS = 90_000;
const NOT_READY_WITHIN_MS = 60_000;
const SETTLE_TIMEOUT_MS = 180_000;
const FAULT_TEST_TIMEOUT_MS = 8 * 60_000;
/** Infrastructure a tenant must never read, in any answer. */
const INFRASTRUCTURE_TEXT = /hostclaim-system|HostClaimRecord|infra\.tenancy\.metal3\.io|ECONN|EPIPE|socket hang up|127\.0\.0\.1|etcdserver/;

let env: DevEnvironment;
let raw: RawClients;
let watches: { readonly name: string; readonly watch: ResumingWatch; readonly list: () => Promise<RawResponse> }[] = [];
/** The binding claims of the last fault (tenant, name), deleted at the start of the next. */
let bindingClaims: { tenant: Tenant; name: string }[] = [];

interface Meta {
  name: string;
  uid: string;
  resourceVersion: string;
  deletionTimestamp?: string;
}

interface Condition {
  type: string;
  status: string;
}

interface ClaimRecord {
  metadata: Meta;
  status?: { bareMetalHost?: { namespace: string; name: string }; conditions?: Condition[] };
}

interface Host {
  metadata: Meta;
  spec: { consumerRef?: { name?: string } };
}

beforeAll(async () => {
  env = await startDevEnvironment({
    workDir: path.join(os.tmpdir(), `dependency-faults-${process.pid}`),
    serverEntry: 'dist/src/main.js',
    binDir,
    bareMetalOperator: true,
    audit: false,
  });
  raw = await rawClients(env);
  const cp = env.controlPlane;
  await createSampleInventory(cp, INFRA, TENANTS, 180_000);
  await createBareMetalHost(cp, { namespace: INFRA, name: 'host-3', labels: { role: 'worker' } });
  await waitForProvisioningState(cp, INFRA, 'host-3', 'available', 180_000);
  for (const tenant of TENANTS) {
    await cp.requestJson('POST', `/api/v1/namespaces/${tenant}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'userdata' },
      stringData: { userData: `#cloud-config\nhostname: ${tenant}` },
    });
  }
  for (const tenant of TENANTS) expectStatus(await createClaim(tenant, 'anchor', unboundSpec()), 201);

  const aggregated = await credentialsOf(env.tenantKubeconfigPaths['tenant-a']);
  const kube = new URL(cp.server);
  const claimsA = `${API}/namespaces/tenant-a/hostclaims`;
  const hardwareDataB = `${API}/namespaces/tenant-b/hardwaredata`;
  watches = [
    { name: 'HostClaims of tenant-a, direct', watch: new ResumingWatch(raw.directConnection({ user: 'tenant-a' }), claimsA), list: () => direct('tenant-a', 'GET', claimsA) },
    {
      name: 'HostClaims of tenant-a, through the aggregator',
      watch: new ResumingWatch({ host: kube.hostname, port: Number(kube.port), ...aggregated }, claimsA),
      list: () => direct('tenant-a', 'GET', claimsA),
    },
    { name: 'HardwareData of tenant-b, direct', watch: new ResumingWatch(raw.directConnection({ user: 'tenant-b' }), hardwareDataB), list: () => direct('tenant-b', 'GET', hardwareDataB) },
  ];
  for (const { watch } of watches) watch.start();
}, 10 * 60_000);

afterAll(async () => {
  for (const { watch } of watches) watch.stop();
  await env.stop();
});

// ---- requests ----------------------------------------------------------------

function direct(tenant: Tenant, method: string, apiPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return raw.direct(
    { user: tenant },
    {
      method,
      path: apiPath,
      timeoutMs: CLIENT_TIMEOUT_MS,
      headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    },
  );
}

function viaAggregator(tenant: Tenant, method: string, apiPath: string, body?: unknown): Promise<RawResponse> {
  return raw.viaAggregator(env.tenantKubeconfigPaths[tenant], {
    method,
    path: apiPath,
    timeoutMs: CLIENT_TIMEOUT_MS,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
}

function claimPath(tenant: Tenant, name = ''): string {
  return `${API}/namespaces/${tenant}/hostclaims${name === '' ? '' : `/${name}`}`;
}

/** A claim no host matches: written throughout, never bound. */
function unboundSpec(): Record<string, unknown> {
  return { poweredOn: false, hostSelector: { matchLabels: { role: 'none' } } };
}

/** A claim the binder binds to a worker, with its user data copied next to the host. */
function boundSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { poweredOn: false, hostSelector: { matchLabels: { role: 'worker' } }, userData: { name: 'userdata' }, ...extra };
}

function createClaim(tenant: Tenant, name: string, spec: Record<string, unknown>): Promise<RawResponse> {
  return viaAggregator(tenant, 'POST', claimPath(tenant), { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name }, spec });
}

function expectStatus(response: RawResponse, status: number): void {
  expect(response.status, response.body).toBe(status);
}

// ---- traffic during a fault ----------------------------------------------------

/**
 * Lanes: reads (LIST, GET, HardwareData LIST), GETs whose authorization
 * is not cached, and writes (create, delete) as tenant-a directly to the
 * server's port, /livez and /readyz, and when
 * `throughAggregator`, reads as tenant-b through kube-apiserver too.
 */
function startTraffic(fault: string, throughAggregator: boolean): Traffic {
  const traffic = new Traffic();
  const reads = [
    { what: 'list', path: claimPath('tenant-a'), expected: [200] },
    { what: 'get anchor', path: claimPath('tenant-a', 'anchor'), expected: [200] },
    { what: 'list hardwaredata', path: `${API}/namespaces/tenant-a/hardwaredata`, expected: [200] },
  ];
  let read = 0;
  traffic.lane('direct reads', 300, () => {
    const step = reads[read++ % reads.length]!;
    return { what: step.what, expected: step.expected, send: () => direct('tenant-a', 'GET', step.path) };
  });

  // A GET as a requester whose authorization is not cached (a new uid each time): it needs a
  // SubjectAccessReview (lists and watches are decided from the RBAC informers, without one).
  let requester = 0;
  traffic.lane('direct reads, uncached authorization', 300, () => {
    const uid = `${fault}-${requester++}`;
    return { what: `get anchor as uid ${uid}`, expected: [200], send: () => direct('tenant-a', 'GET', claimPath('tenant-a', 'anchor'), undefined, { 'X-Remote-Uid': uid }) };
  });

  // Creates a fresh name each time; deletes the oldest acknowledged claim once five exist.
  const written: string[] = [];
  const ambiguous = new Set<string>();
  let created = 0;
  traffic.lane('direct writes', 300, () => {
    if (written.length >= 5) {
      const name = written[0]!;
      return {
        what: `delete ${name}`,
        // A delete answered 5xx may have happened: its retry may find nothing.
        expected: ambiguous.has(name) ? [200, 404] : [200],
        send: () => direct('tenant-a', 'DELETE', claimPath('tenant-a', name)),
        then: (answer) => {
          if (answer.expected) written.shift();
          else ambiguous.add(name);
        },
      };
    }
    const name = `w-${fault}-${created++}`;
    return {
      what: `create ${name}`,
      expected: [201],
      send: () => direct('tenant-a', 'POST', claimPath('tenant-a'), { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name }, spec: unboundSpec() }),
      then: (answer) => {
        if (answer.expected) written.push(name);
      },
    };
  });

  let probe = 0;
  traffic.lane('health', 250, () => {
    const livez = probe++ % 2 === 0;
    return {
      what: livez ? 'livez' : 'readyz',
      expected: livez ? [200] : [200, 500],
      send: () => raw.direct({ user: 'tenant-a' }, { path: livez ? '/livez' : '/readyz', timeoutMs: 5_000 }),
    };
  });

  if (throughAggregator) {
    let aggregated = 0;
    traffic.lane('aggregated reads', 500, () => {
      const step = reads[aggregated++ % reads.length]!;
      const tenantPath = step.path.replace('/namespaces/tenant-a/', '/namespaces/tenant-b/');
      return { what: `${step.what} (tenant-b)`, expected: step.expected, send: () => viaAggregator('tenant-b', 'GET', tenantPath) };
    });
  }
  return traffic;
}

function readyzAnswers(answers: readonly Answer[]): Answer[] {
  return answers.filter((a) => a.what === 'readyz');
}

/** Waits until /readyz answers `status` (polling directly), returning when it did, in traffic time. */
async function waitForReadyz(traffic: Traffic, status: 200 | 500, timeoutMs: number): Promise<number> {
  return pollUntil(
    `/readyz ${status}`,
    async () => {
      const response = await raw.direct({ user: 'tenant-a' }, { path: '/readyz?verbose', timeoutMs: 5_000 }).catch(() => undefined);
      return response?.status === status ? traffic.now() : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** Every answer is a good one or a retriable Status, in time, without infrastructure text; /livez always 200. */
function expectHonestAnswers(answers: readonly Answer[]): void {
  const wrong = answers.filter((a) => !a.expected && !isRetriable(a));
  expect(describeAnswers(wrong), 'answers that are neither normal nor a retriable Status').toBe('');
  const late = answers.filter((a) => a.durationMs > REQUEST_BOUND_MS);
  expect(describeAnswers(late), `answers after more than ${REQUEST_BOUND_MS} ms`).toBe('');
  const leaking = answers.filter((a) => INFRASTRUCTURE_TEXT.test(a.body));
  expect(describeAnswers(leaking), 'answers with infrastructure text').toBe('');
  expect(answers.filter((a) => a.what === 'livez' && a.status !== 200)).toEqual([]);
}

// ---- bindings -------------------------------------------------------------------

/** Deletes the last fault's binding claims (their release runs across this fault) and creates one per tenant. */
async function churnBindings(fault: string, spec: (tenant: Tenant) => Record<string, unknown>): Promise<void> {
  for (const { tenant, name } of bindingClaims) {
    const deleted = await viaAggregator(tenant, 'DELETE', claimPath(tenant, name));
    expect([200, 202], deleted.body).toContain(deleted.status);
  }
  bindingClaims = TENANTS.map((tenant) => ({ tenant, name: `${fault}-${tenant.slice(-1)}` }));
  for (const { tenant, name } of bindingClaims) expectStatus(await createClaim(tenant, name, spec(tenant)), 201);
}

interface BindingState {
  readonly records: ClaimRecord[];
  readonly hosts: Host[];
  readonly copies: { metadata: { name: string; labels: Record<string, string> } }[];
}

async function bindingState(): Promise<BindingState> {
  const cp = env.controlPlane;
  const [records, hosts, copies] = await Promise.all([
    cp.requestJson<{ items: ClaimRecord[] }>('GET', RECORDS),
    cp.requestJson<{ items: Host[] }>('GET', `/apis/metal3.io/v1alpha1/namespaces/${INFRA}/baremetalhosts`),
    cp.requestJson<{ items: BindingState['copies'] }>('GET', `/api/v1/namespaces/${INFRA}/secrets?labelSelector=${COPY_OWNER_LABEL}`),
  ]);
  return { records: records.items, hosts: hosts.items, copies: copies.items };
}

/**
 * What the bindings must look like once the binder is done: each binding
 * claim of this fault on its own host (the host's consumerRef names it, the
 * claim names the host), no host naming a record that is gone or deleting,
 * and exactly one user-data copy per bound claim, labelled with its uid.
 */
function bindingProblems(state: BindingState): string[] {
  const problems: string[] = [];
  const live = new Map(state.records.filter((r) => r.metadata.deletionTimestamp === undefined).map((r) => [r.metadata.name, r]));
  const hostsOf = new Map<string, string[]>();
  for (const host of state.hosts) {
    const consumer = host.spec.consumerRef?.name;
    if (consumer === undefined) continue;
    hostsOf.set(consumer, [...(hostsOf.get(consumer) ?? []), host.metadata.name]);
    if (!live.has(consumer)) problems.push(`host ${host.metadata.name} is bound to ${consumer}, which is gone or deleting`);
  }
  const expectedCopies = new Map<string, string>();
  for (const { tenant, name } of bindingClaims) {
    const recordName = `${tenant}.${name}`;
    const record = live.get(recordName);
    const hosts = hostsOf.get(recordName) ?? [];
    if (record === undefined) {
      problems.push(`${recordName} is missing`);
      continue;
    }
    if (hosts.length !== 1) problems.push(`${recordName} is bound to ${hosts.length} hosts (${hosts.join(', ')})`);
    else if (record.status?.bareMetalHost?.name !== hosts[0]) problems.push(`${recordName} says host ${record.status?.bareMetalHost?.name ?? 'none'}, ${hosts[0] ?? ''} names it`);
    expectedCopies.set(`${recordName}-userdata`, record.metadata.uid);
  }
  for (const [consumer, hosts] of hostsOf) if (hosts.length > 1) problems.push(`${consumer} holds ${hosts.join(', ')}`);
  const actualCopies = new Map(state.copies.map((c) => [c.metadata.name, c.metadata.labels[COPY_OWNER_LABEL] ?? '']));
  const copies = (map: Map<string, string>): string => JSON.stringify([...map].sort());
  if (copies(actualCopies) !== copies(expectedCopies)) problems.push(`Secret copies ${copies(actualCopies)}, expected ${copies(expectedCopies)}`);
  return problems;
}

async function expectBindingsSettled(): Promise<void> {
  let problems: string[] = [];
  await pollUntil(
    'the binder to finish across the fault',
    async () => {
      // Right after etcd returns, kube-apiserver may still let a call hang past the harness's 10 s: ask again.
      const state = await bindingState().catch((error: unknown) => {
        problems = [`kube-apiserver: ${(error as Error).message}`];
        return undefined;
      });
      if (state === undefined) return undefined;
      problems = bindingProblems(state);
      return problems.length === 0 ? true : undefined;
    },
    { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 1000, describeFailure: () => problems.join('\n') },
  );
  expect(bindingProblems(await bindingState())).toEqual([]);
}

// ---- after the fault ------------------------------------------------------------

/** Each resuming watch ends equal to a fresh list (names and resourceVersions). */
async function expectWatchesConverged(): Promise<void> {
  for (const { name, watch, list } of watches) {
    let fresh: [string, string][] = [];
    await pollUntil(
      `${name} to equal a fresh list`,
      async () => {
        const response = await list().catch(() => undefined);
        if (response?.status !== 200) return undefined;
        const items = (response.json as { items: { metadata: Meta }[] }).items;
        fresh = items.map((i): [string, string] => [i.metadata.name, i.metadata.resourceVersion]).sort(([a], [b]) => a.localeCompare(b));
        return JSON.stringify(watch.state()) === JSON.stringify(fresh) ? true : undefined;
      },
      { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 500, describeFailure: () => `mirror ${JSON.stringify(watch.state())}\nlist   ${JSON.stringify(fresh)}` },
    );
    expect(watch.state().length, name).toBeGreaterThan(0);
  }
}

/** The aggregator serves the group again (its availability follows kube-apiserver's restart). */
async function expectAggregatorServes(): Promise<void> {
  const answer = await pollUntil(
    'a list through the aggregator',
    async () => {
      const response = await viaAggregator('tenant-a', 'GET', claimPath('tenant-a')).catch(() => undefined);
      return response?.status === 200 ? response : undefined;
    },
    { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 500 },
  );
  expect((answer.json as { kind: string }).kind).toBe('HostClaimList');
}

// ---- the faults -----------------------------------------------------------------

interface Fault {
  readonly name: string;
  /** Break the dependency; resolves once broken. */
  readonly begin: () => Promise<void>;
  /** At least this long broken (and until /readyz said not ready). */
  readonly holdMs: number;
  /** Repair it; resolves when the dependency answers again (the start of the 10 s bound). */
  readonly end: () => Promise<void>;
  readonly throughAggregator: boolean;
}

/**
 * Runs one fault with bindings churning across it and traffic throughout;
 * returns every answer, for fault-specific checks after the common ones.
 */
async function runFault(fault: Fault): Promise<Answer[]> {
  await churnBindings(fault.name, () => boundSpec());
  const traffic = startTraffic(fault.name, fault.throughAggregator);
  let answers: Answer[];
  try {
    await delay(1000);
    const brokenAt = traffic.now();
    await fault.begin();
    const notReadyAt = await waitForReadyz(traffic, 500, NOT_READY_WITHIN_MS);
    console.info(`[dependency-faults] ${fault.name}: /readyz not ready ${((notReadyAt - brokenAt) / 1000).toFixed(1)} s after the fault began`);
    await delay(Math.max(0, fault.holdMs - (traffic.now() - brokenAt)));
    await fault.end();
    const answersAgainAt = traffic.now();
    const readyAt = await waitForReadyz(traffic, 200, 60_000);
    console.info(`[dependency-faults] ${fault.name}: ready ${((readyAt - answersAgainAt) / 1000).toFixed(1)} s after the dependency answered again`);
    expect(readyAt - answersAgainAt).toBeLessThanOrEqual(READY_WITHIN_MS);
    // Traffic after recovery too: no failure may linger.
    await delay(5000);
  } finally {
    answers = await traffic.stop();
  }
  const slowest = answers.reduce((a, b) => (b.durationMs > a.durationMs ? b : a));
  console.info(`[dependency-faults] ${fault.name}: ${summarizeAnswers(answers)}; slowest: ${describeAnswers([slowest])}`);
  expectHonestAnswers(answers);
  expect(answers.filter(isRetriable).length, 'the fault made some request fail').toBeGreaterThan(0);
  await expectAggregatorServes();
  await expectWatchesConverged();
  await expectBindingsSettled();
  return answers;
}

/** kube-apiserver answers a consistent read again (it reads the current revision from etcd). */
async function kubeServesConsistentReads(): Promise<void> {
  await pollUntil(
    'kube-apiserver to serve a consistent read',
    async () => ((await env.controlPlane.request('GET', `${RECORDS}?limit=1`).catch(() => undefined))?.status === 200 ? true : undefined),
    { timeoutMs: 120_000, intervalMs: 100 },
  );
}

describe('dependency faults', () => {
  it(
    'kube-apiserver restarted',
    async () => {
      const cp = env.controlPlane;
      await runFault({
        name: 'restart',
        begin: () => cp.stopComponent('kube-apiserver'),
        holdMs: 5_000,
        end: () => cp.startComponent('kube-apiserver'),
        throughAggregator: false,
      });
    },
    FAULT_TEST_TIMEOUT_MS,
  );

  it(
    'etcd stopped and restarted',
    async () => {
      const cp = env.controlPlane;
      await runFault({
        name: 'etcd',
        begin: () => cp.stopComponent('etcd'),
        // Past the server's 30 s bound on a storage call: requests in flight when etcd went must time out (504), not hang.
        holdMs: 40_000,
        end: async () => {
          await cp.startComponent('etcd');
          await kubeServesConsistentReads();
        },
        throughAggregator: true,
      });
    },
    FAULT_TEST_TIMEOUT_MS,
  );

  it(
    'kube-apiserver frozen (SIGSTOP) for 30 s',
    async () => {
      const cp = env.controlPlane;
      await runFault({
        name: 'freeze',
        begin: () => {
          cp.pauseComponent('kube-apiserver');
          return Promise.resolve();
        },
        holdMs: 30_000,
        end: () => {
          cp.resumeComponent('kube-apiserver');
          return Promise.resolve();
        },
        throughAggregator: false,
      });
    },
    FAULT_TEST_TIMEOUT_MS,
  );

  it(
    'baremetal-operator down: nothing fails, the server stays ready, provisioning resumes when it is back',
    async () => {
      const bmo = env.bareMetalOperator;
      if (bmo === undefined) throw new Error('the environment runs baremetal-operator');
      await bmo.stop();
      // tenant-a's claim provisions (only baremetal-operator moves a host to provisioned, and only a powered-on one); tenant-b's only binds.
      const image = { url: 'http://images.example/ubuntu.qcow2', checksum: 'http://images.example/ubuntu.qcow2.sha256', format: 'qcow2' };
      await churnBindings('bmo', (tenant) => boundSpec(tenant === 'tenant-a' ? { poweredOn: true, image } : {}));
      const traffic = startTraffic('bmo', true);
      let answers: Answer[];
      try {
        await delay(20_000);
        await bmo.start();
        await delay(5_000);
      } finally {
        answers = await traffic.stop();
      }
      console.info(`[dependency-faults] bmo: ${summarizeAnswers(answers)}`);
      expectHonestAnswers(answers);
      expect(describeAnswers(answers.filter((a) => !a.expected))).toBe('');
      expect(readyzAnswers(answers).filter((a) => a.status !== 200)).toEqual([]);
      await expectWatchesConverged();
      await expectBindingsSettled();
      const provisioned = await pollUntil(
        'bmo-a to be provisioned',
        async () => {
          const response = await viaAggregator('tenant-a', 'GET', claimPath('tenant-a', 'bmo-a'));
          const claim = response.json as ClaimRecord;
          return claim.status?.conditions?.some((c) => c.type === 'Provisioned' && c.status === 'True') === true ? claim : undefined;
        },
        { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 1000 },
      );
      expect(provisioned.status?.bareMetalHost?.namespace).toBe(INFRA);
    },
    FAULT_TEST_TIMEOUT_MS,
  );
});
