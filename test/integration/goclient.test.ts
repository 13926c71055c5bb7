/**
 * A Go client built from Go modules - upstream baremetal-operator HostClaim
 * types registered under tenancy.metal3.io/v1alpha1, a controller-runtime
 * client and cache - against the real aggregator, once with client-go's
 * default WatchListClient (informers stream their initial state with
 * sendInitialEvents=true) and once with classic LIST+WATCH
 * (KUBE_FEATURE_WatchListClient=false). The program (test/goclient) checks
 * CRUD, optimistic concurrency, status-subresource and delete semantics and
 * that its informer cache converges to a fresh LIST; it reports which
 * protocol its reflector used from the requests it actually sent.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runBuildScript } from '../controlplane/binaries.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { repoPath } from '../controlplane/paths.js';
import { runGoProgram, summaryOf, type GoProgramRun } from '../support/go-program.js';

const binDir = inject('controlPlaneBinDir');
const NAMESPACE = 'tenant-a';
/** A namespace tenant-a's user may not read. */
const OTHER_NAMESPACE = 'tenant-b';
const SEED = 'goclient-seed';
/** A cold build compiles client-go and controller-runtime (about a minute on 2 cores, more when modules must be downloaded). */
const SETUP_TIMEOUT_MS = 20 * 60_000;
const RUN_TIMEOUT_MS = 150_000;

interface RequestRecord {
  method: string;
  path: string;
  query: string;
  status: number;
  error?: string;
}

/** The JSON line test/goclient prints (see scenario.go `summary`). */
interface GoClientSummary {
  ok: boolean;
  runId: string;
  watchListClientGate: boolean;
  reflector: {
    mode: 'watchlist' | 'list-watch' | 'watchlist-fallback' | 'none';
    watchListRequests: number;
    listRequests: number;
    watchRequests: number;
    firstWatchList?: RequestRecord;
    firstList?: RequestRecord;
    requests: RequestRecord[];
  };
  syncMillis: number;
  initialObjects: string[];
  created: string[];
  deleted?: string;
  convergedMillis: number;
  cachedNamespaces: string[];
  finalObjects: { name: string; resourceVersion: string }[];
  informerEvents: { added: number; updated: number; deleted: string[] };
  clientErrors: RequestRecord[];
  checks: { name: string; ok: boolean; message?: string }[];
  failures: string[];
}

type RunResult = GoProgramRun<GoClientSummary>;

/** Every check the program runs; a missing name means it stopped early. */
const ALL_CHECKS = [
  'setup',
  'informer syncs',
  'create HostClaims with the typed client',
  'get returns what create returned',
  'update spec bumps generation and resourceVersion',
  'metadata-only update keeps generation',
  'update with a stale resourceVersion is a Conflict',
  'merge patch (client.MergeFrom) applies spec and labels',
  'merge patch with optimistic lock from a stale base is a Conflict',
  'tenant Status().Update() is Forbidden',
  'Status().Update() round-trips status and changes only status',
  'tenant reads the status written',
  'main-endpoint update ignores status',
  'get before delete',
  'delete with dryRun=All keeps the object',
  'delete with a stale resourceVersion precondition is a Conflict',
  'delete removes the object (NotFound afterwards)',
  'informer cache converges to a fresh LIST',
  'informer saw the deletion',
];

/** With --all-namespaces: a claim made where the tenant cannot read, and what the cluster-wide informer holds. */
const ALL_NAMESPACES_CHECKS = [
  ...ALL_CHECKS.slice(0, -2),
  'a claim where the tenant cannot read is refused as an absent one is',
  ...ALL_CHECKS.slice(-2),
  "informer on all namespaces holds only the readable namespaces' claims",
];

let env: DevEnvironment;
let goclient: string;

/** Runs test/goclient/build.sh (instant when cached) and returns the binary path it prints last. */
function buildGoClient(): Promise<string> {
  return runBuildScript(repoPath('test', 'goclient', 'build.sh'));
}

function runGoClient(runId: string, extraEnv: Record<string, string>, extraArgs: readonly string[] = []): Promise<RunResult> {
  const args = [
    `--kubeconfig=${env.tenantKubeconfigPaths['tenant-a']}`,
    `--status-kubeconfig=${env.adminKubeconfigPath}`,
    `--namespace=${NAMESPACE}`,
    `--run-id=${runId}`,
    '--timeout=120s',
    ...extraArgs,
  ];
  // Only the variable under test decides the mode, whatever the caller's environment says.
  const { KUBE_FEATURE_WatchListClient: _ignored, ...inherited } = process.env;
  return runGoProgram<GoClientSummary>(goclient, args, { ...inherited, ...extraEnv }, RUN_TIMEOUT_MS);
}

/**
 * What every run must show, whatever the informer's protocol. Failed checks
 * are listed with the program's own message.
 */
function expectAllChecksPassed(result: RunResult, summary: GoClientSummary, checks: readonly string[] = ALL_CHECKS): void {
  const failed = summary.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.message ?? ''}`);
  // Known server defect when this test was written: the three delete checks
  // fail because the server's backing client sends DELETE bodies
  // (DeleteOptions) without Content-Length. kube-apiserver then ignores the
  // options (dryRun=All deletes for real, preconditions are not checked) and
  // reads the body bytes as the start of the next request on that keep-alive
  // connection, which gets a bare 400 (surfacing as 500 "storage request
  // failed", or as 403 when it was a SubjectAccessReview).
  expect(
    failed,
    `hostclaim-goclient checks failed (the server differs from kube-apiserver; delete checks failing together with 500 "storage request failed" point to DeleteOptions bodies lost between the server and kube-apiserver):\n${result.stderr}`,
  ).toEqual([]);
  expect(summary.checks.map((c) => c.name)).toEqual(checks);
  expect(summary.ok).toBe(true);
  expect(result.code).toBe(0);
  // Expected refusals only (409 conflicts, tenant 403 on status, 404 after
  // delete); a 5xx or a transport error is always a server fault.
  const faults = summary.clientErrors.filter((e) => e.status >= 500 || e.status === 0);
  expect(faults, 'server faults seen by the Go clients').toEqual([]);
  expect(new Set(summary.clientErrors.map((e) => e.status))).toEqual(new Set([403, 404, 409]));

  const [first, second, third] = summary.created;
  expect(summary.created).toEqual([0, 1, 2].map((i) => `gc-${summary.runId}-${i}`));
  expect(summary.deleted).toBe(second);
  const finalNames = summary.finalObjects.map((o) => o.name);
  expect(finalNames).toEqual(expect.arrayContaining([SEED, first, third]));
  expect(finalNames).not.toContain(second);
  expect(summary.informerEvents.deleted).toContain(second);
}

beforeAll(async () => {
  // Build first: a failing Go build should not cost a control-plane start.
  goclient = await buildGoClient();
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `goclient-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder' });
  const seed = `apiVersion: tenancy.metal3.io/v1alpha1
kind: HostClaim
metadata:
  name: ${SEED}
spec:
  poweredOn: false
  image: {url: "http://images.example/seed.qcow2", checksum: "http://images.example/seed.qcow2.sha256sum"}
`;
  // So that the informer's initial state (streamed or listed) is never empty.
  const created = await env.controlPlane.kubectl(['-n', NAMESPACE, 'create', '-f', '-'], {
    kubeconfig: env.tenantKubeconfigPaths['tenant-a'],
    stdin: seed,
  });
  if (created.code !== 0) throw new Error(`creating the seed HostClaim failed: ${created.stderr}`);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await env.stop();
});

describe('a Go client (controller-runtime, upstream BMO HostClaim types) through the aggregator', () => {
  it('syncs its informer with WatchList (client-go default) and passes every check', async () => {
    const result = await runGoClient('watchlist', {});
    const summary = summaryOf('hostclaim-goclient', result);

    expect(summary.watchListClientGate).toBe(true);
    // The reflector really streamed its initial state: one sendInitialEvents
    // watch answered 200, and no LIST (a LIST would mean it fell back).
    expect(summary.reflector.mode).toBe('watchlist');
    expect(summary.reflector.listRequests).toBe(0);
    const watchList = summary.reflector.firstWatchList;
    expect(watchList?.status).toBe(200);
    const query = new URLSearchParams(watchList?.query ?? '');
    expect(Object.fromEntries(['watch', 'sendInitialEvents', 'allowWatchBookmarks', 'resourceVersionMatch'].map((k) => [k, query.get(k)]))).toEqual({
      watch: 'true',
      sendInitialEvents: 'true',
      allowWatchBookmarks: 'true',
      resourceVersionMatch: 'NotOlderThan',
    });
    expect(summary.initialObjects).toEqual([SEED]);

    expectAllChecksPassed(result, summary);
  }, RUN_TIMEOUT_MS);

  it('syncs its informer with classic LIST+WATCH (KUBE_FEATURE_WatchListClient=false) and passes every check', async () => {
    const result = await runGoClient('classic', { KUBE_FEATURE_WatchListClient: 'false' });
    const summary = summaryOf('hostclaim-goclient', result);

    expect(summary.watchListClientGate).toBe(false);
    expect(summary.reflector.mode).toBe('list-watch');
    expect(summary.reflector.watchListRequests).toBe(0);
    expect(summary.reflector.firstList?.status).toBe(200);
    expect(summary.reflector.watchRequests).toBeGreaterThanOrEqual(1);
    // The LIST carried what the first run left behind (its deleted claim excluded).
    expect(summary.initialObjects).toEqual(expect.arrayContaining([SEED, 'gc-watchlist-0', 'gc-watchlist-2']));
    expect(summary.initialObjects).not.toContain('gc-watchlist-1');

    expectAllChecksPassed(result, summary);
  }, RUN_TIMEOUT_MS);

  it('syncs an informer on all namespaces as a tenant of one, and it holds only that namespace\'s claims', async () => {
    // A claim the tenant may not read exists before the informer starts; the program makes another while it runs.
    const other = await env.controlPlane.kubectl(['-n', OTHER_NAMESPACE, 'create', '-f', '-'], {
      kubeconfig: env.adminKubeconfigPath,
      stdin: `apiVersion: tenancy.metal3.io/v1alpha1\nkind: HostClaim\nmetadata:\n  name: not-for-tenant-a\nspec:\n  poweredOn: false\n`,
    });
    expect(other.code, other.stderr).toBe(0);

    const result = await runGoClient('allns', {}, ['--all-namespaces', `--other-namespace=${OTHER_NAMESPACE}`, `--readable-namespaces=${NAMESPACE}`]);
    const summary = summaryOf('hostclaim-goclient', result);

    // The reflector listed and watched the cluster-wide collection, not a namespace.
    expect(summary.reflector.mode).toBe('watchlist');
    expect(summary.reflector.firstWatchList?.path).toBe('/apis/tenancy.metal3.io/v1alpha1/hostclaims');
    expect(summary.reflector.firstWatchList?.status).toBe(200);
    expectAllChecksPassed(result, summary, ALL_NAMESPACES_CHECKS);
    expect(summary.cachedNamespaces).toEqual([NAMESPACE]);
    expect(summary.finalObjects.map((o) => o.name)).toContain('gc-allns-after');
  }, RUN_TIMEOUT_MS);

  it('leaves what the Go clients wrote readable by kubectl, status included', async () => {
    const res = await env.controlPlane.kubectl(['-n', NAMESPACE, 'get', 'hostclaims', '-o', 'json'], { kubeconfig: env.tenantKubeconfigPaths['tenant-a'] });
    expect(res.code).toBe(0);
    const list = JSON.parse(res.stdout) as {
      items: { metadata: { name: string; labels?: Record<string, string> }; status?: { bareMetalHost?: { name: string }; poweredOn?: boolean } }[];
    };
    const byName = new Map(list.items.map((item) => [item.metadata.name, item]));
    for (const run of ['watchlist', 'classic']) {
      expect(byName.get(`gc-${run}-0`)?.metadata.labels).toMatchObject({ 'goclient.test/run': run, 'goclient.test/touched': 'yes' });
      expect(byName.get(`gc-${run}-2`)?.status).toMatchObject({ bareMetalHost: { name: 'host-0' }, poweredOn: true });
      expect(byName.has(`gc-${run}-1`)).toBe(false);
    }
  });
});
