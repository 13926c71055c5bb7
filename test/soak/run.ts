// One soak run against a running environment (control plane with
// baremetal-operator's CRDs, hostclaim-apiserver behind the aggregator):
// builds a small scenario with test/bench's scenario code, starts a second
// replica, then for the configured time runs steady load on both replicas
// (reads, writes, binding churn, watchers), SIGKILLs the binder's leader
// and restarts it every few minutes, samples RSS; at the end compares a
// watch-fed cache of every HostClaim, on each replica, with a fresh LIST.
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DevEnvironment } from '../controlplane/environment.js';
import { defaultConfig, type BenchConfig } from '../bench/config.js';
import { H2Client } from '../bench/h2.js';
import { buildScenario, CLAIMS, TENANT_USER, tenantNamespace } from '../bench/scenario.js';
import { credentialsOf } from '../support/raw-http.js';
import { SoakClient, type Endpoint } from './client.js';
import type { SoakConfig } from './config.js';
import { ErrorLog, type ErrorCounts } from './errors.js';
import { compare, Informer } from './informer.js';
import { Load, sleep, type LoadCounts } from './load.js';
import { Replicas, REPLICAS, rssGrowth, type Kill, type ReplicaName, type RssGrowth, type RssSample } from './replicas.js';

export const SOAK_SCHEMA = 'hostclaim-apiserver-soak/1';

export interface InformerCheck {
  readonly replica: ReplicaName;
  readonly cached: number;
  readonly listed: number;
  readonly missing: string[];
  readonly extra: string[];
  readonly stale: string[];
  readonly equal: boolean;
  readonly relists: number;
}

export interface SoakResults {
  readonly schema: typeof SOAK_SCHEMA;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly config: SoakConfig;
  readonly machine: { readonly cores: number; readonly loadAverageBefore: number[]; readonly loadAverageAfter: number[] };
  readonly kills: Kill[];
  readonly rss: RssSample[];
  readonly rssGrowth: RssGrowth[];
  readonly load: Record<ReplicaName, LoadCounts>;
  readonly watchers: { readonly count: number; readonly events: number; readonly relists: number };
  readonly errors: ErrorCounts;
  readonly informerCheck: InformerCheck[];
  readonly failures: string[];
}

const ALL_CLAIMS = `${CLAIMS}/hostclaims`;
/** An admin as the aggregator asserts one, for the direct path. */
const ADMIN_HEADERS = { 'X-Remote-User': 'soak-admin', 'X-Remote-Group': ['system:masters', 'system:authenticated'] };

export async function runSoak(env: DevEnvironment, config: SoakConfig, log: (line: string) => void): Promise<SoakResults> {
  const startedAt = new Date();
  const loadAverageBefore = os.loadavg();
  const kube = await credentialsOf(env.adminKubeconfigPath);
  const tenantKubeconfig = await env.controlPlane.userKubeconfig(TENANT_USER, [], path.join(env.workDir, 'soak-tenant.kubeconfig'));
  const tenantIdentity = await credentialsOf(tenantKubeconfig);
  const admin = new H2Client(env.controlPlane.server, kube, 1);
  const tenantH2 = new H2Client(env.controlPlane.server, tenantIdentity, 1);
  const origin = performance.now();
  try {
    await buildScenario(setupConfig(config), { admin, tenant: tenantH2 }, { stopServer: () => env.stopServer(), startServer: () => env.restartServer(), cpu: () => Promise.resolve({ controlPlane: 0, server: undefined, client: 0 }) }, log);
    const replicas = new Replicas(env, admin, origin);
    await replicas.start();
    log(`replicas: aggregated pid ${replicas.pid('aggregated')}, direct pid ${replicas.pid('direct')} at ${replicas.directUrl()}`);

    const frontProxy = {
      ca: env.aggregatedServerCaPem,
      cert: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.crt'), 'utf8'),
      key: await readFile(path.join(env.controlPlane.pkiDir, 'front-proxy-client.key'), 'utf8'),
      servername: 'localhost',
    };
    const endpoints: Record<ReplicaName, (user: 'tenant' | 'admin') => Endpoint> = {
      aggregated: (user) => ({ origin: () => env.controlPlane.server, ...(user === 'tenant' ? tenantIdentity : kube) }),
      direct: (user) => ({
        origin: () => replicas.directUrl(),
        ...frontProxy,
        headers: user === 'tenant' ? { 'X-Remote-User': TENANT_USER, 'X-Remote-Group': ['system:authenticated'] } : ADMIN_HEADERS,
      }),
    };
    const errors = new ErrorLog();
    const loopSockets = config.readers + config.writers + 2 * config.churners;
    const tenants = Object.fromEntries(REPLICAS.map((replica) => [replica, new SoakClient(replica, endpoints[replica]('tenant'), loopSockets + 4, config.pooledWatches > 0)])) as Record<ReplicaName, SoakClient>;
    const admins = Object.fromEntries(REPLICAS.map((replica) => [replica, new SoakClient(replica, endpoints[replica]('admin'), 2)])) as Record<ReplicaName, SoakClient>;
    const watchTimeout = (): number => 300 + Math.random() * 300;
    // /metrics is not behind the aggregator: each replica's own port, as an admin.
    const metricsClients: Record<ReplicaName, SoakClient> = {
      aggregated: new SoakClient('aggregated', { origin: () => env.serverUrl, ...frontProxy, headers: ADMIN_HEADERS }, 1),
      direct: new SoakClient('direct', { origin: () => replicas.directUrl(), ...frontProxy, headers: ADMIN_HEADERS }, 1),
    };
    const metrics = async (replica: ReplicaName): Promise<string> => (await metricsClients[replica].request('GET', '/metrics')).body;

    // The caches checked at the end live through the whole run, kills included.
    const checked = REPLICAS.map((replica) => new Informer(admins[replica], ALL_CLAIMS, errors, 'informer', watchTimeout));
    for (const informer of checked) informer.start();
    const watchers = Array.from({ length: config.watchers }, (_, i) => {
      const replica = REPLICAS[i % REPLICAS.length] ?? 'aggregated';
      return new Informer(tenants[replica], `${CLAIMS}/namespaces/${tenantNamespace(Math.floor(i / REPLICAS.length) % config.namespaces)}/hostclaims`, errors, 'watcher', watchTimeout);
    });
    for (const [i, watcher] of watchers.entries()) {
      watcher.start();
      if (i % 50 === 49) await sleep(200);
    }
    log(`${watchers.length} watchers started`);
    const loads = Object.fromEntries(REPLICAS.map((replica) => [replica, new Load(tenants[replica], config, errors)])) as Record<ReplicaName, Load>;
    for (const load of Object.values(loads)) load.start();

    const rss: RssSample[] = [];
    const kills: Kill[] = [];
    const endAt = performance.now() + config.minutes * 60_000;
    let nextSample = performance.now();
    let nextKill = config.killEveryMinutes > 0 ? performance.now() + config.killEveryMinutes * 60_000 : Infinity;
    while (performance.now() < endAt) {
      if (performance.now() >= nextSample) {
        const samples = await replicas.sample(metrics);
        rss.push(...samples);
        log(`RSS (V8 heap used / committed, external) ${samples.map((s) => `${s.replica} ${s.rssMiB} (${s.heapUsedMiB ?? '?'} / ${s.heapTotalMiB ?? '?'}, ${s.externalMiB ?? '?'}) MiB`).join(', ')}; reads ${sum(loads, 'reads')}, writes ${sum(loads, 'writes')}, churn ${sum(loads, 'churnCycles')}; unexpected errors ${errors.unexpectedTotal()}`);
        nextSample += config.sampleSeconds * 1000;
      }
      if (performance.now() >= nextKill) {
        kills.push(await killLeader(replicas, errors, origin, log));
        nextKill += config.killEveryMinutes * 60_000;
      }
      await sleep(Math.max(0, Math.min(nextSample, nextKill, endAt) - performance.now()));
    }

    log('load stopping');
    await Promise.all(Object.values(loads).map((load) => load.stop()));
    await Promise.all(watchers.map((watcher) => watcher.stop()));
    const informerCheck = await checkInformers(checked, admins, log);
    for (const informer of checked) await informer.stop();
    for (const client of [...Object.values(tenants), ...Object.values(admins), ...Object.values(metricsClients)]) client.close();

    const startedAtSeconds = new Map([...replicas.startedAt.entries()].map(([pid, at]) => [pid, (at - origin) / 1000]));
    const growth = rssGrowth(rss, startedAtSeconds, config.warmupMinutes * 60);
    const counts = errors.counts();
    const failures = [
      ...(errors.unexpectedTotal() > 0 ? [`${errors.unexpectedTotal()} unexpected errors`] : []),
      ...growth.filter((g) => g.growth > config.maxRssGrowth).map((g) => `${g.replica} pid ${g.pid}: RSS grew ${(100 * g.growth).toFixed(1)} % after warm-up (${g.baselineMiB} → ${g.finalMiB} MiB)`),
      ...informerCheck.filter((check) => !check.equal).map((check) => `${check.replica}: the watch-fed cache differs from a fresh list`),
    ];
    return {
      schema: SOAK_SCHEMA,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      config,
      machine: { cores: os.availableParallelism(), loadAverageBefore, loadAverageAfter: os.loadavg() },
      kills,
      rss,
      rssGrowth: growth,
      load: { aggregated: loads.aggregated.counts, direct: loads.direct.counts },
      watchers: { count: watchers.length, events: watchers.reduce((total, w) => total + w.events, 0), relists: watchers.reduce((total, w) => total + w.relists, 0) },
      errors: counts,
      informerCheck,
      failures,
    };
  } finally {
    admin.close();
    tenantH2.close();
    await rm(tenantKubeconfig, { force: true });
  }
}

/** test/bench's scenario, small: one claim per namespace bound in setup, `churnHosts` free hosts for the churn. */
function setupConfig(config: SoakConfig): BenchConfig {
  return {
    ...defaultConfig,
    namespaces: config.namespaces,
    claimsPerNamespace: config.claimsPerNamespace,
    hosts: config.namespaces + config.churnHosts,
    hostNamespaces: 1,
    hostsBound: config.namespaces,
    setupConcurrency: 8,
    setupBindTimeoutMs: 600_000,
  };
}

async function killLeader(replicas: Replicas, errors: ErrorLog, origin: number, log: (line: string) => void): Promise<Kill> {
  let leader = await replicas.leader();
  for (let attempt = 0; leader === undefined && attempt < 60; attempt++) {
    await sleep(1000);
    leader = await replicas.leader();
  }
  if (leader === undefined) throw new Error('no replica holds the binder Lease');
  const atSeconds = Math.round((performance.now() - origin) / 1000);
  log(`killing the binder's leader: ${leader} (pid ${replicas.pid(leader)})`);
  errors.down(leader);
  const kill = await replicas.killAndRestart(leader);
  errors.up(leader);
  log(`${leader} back as pid ${kill.newPid} after ${kill.backAfterSeconds.toFixed(1)} s`);
  return { atSeconds, replica: leader, ...kill };
}

/** Each replica's watch-fed cache against a fresh LIST from it, retried for a minute while the binder may still be writing. */
async function checkInformers(informers: readonly Informer[], admins: Record<ReplicaName, SoakClient>, log: (line: string) => void): Promise<InformerCheck[]> {
  const results: InformerCheck[] = [];
  for (const [index, replica] of REPLICAS.entries()) {
    const informer = informers[index] as Informer;
    let check: InformerCheck | undefined;
    for (let attempt = 0; attempt < 30 && check?.equal !== true; attempt++) {
      if (attempt > 0) await sleep(2000);
      const answer = await admins[replica].request('GET', ALL_CLAIMS).catch(() => undefined);
      if (answer?.status !== 200) continue;
      const list = JSON.parse(answer.body) as { items: { metadata: { namespace: string; name: string; resourceVersion: string } }[] };
      const listed = new Map(list.items.map((item) => [`${item.metadata.namespace}/${item.metadata.name}`, item.metadata.resourceVersion]));
      const diff = compare(informer.items, listed);
      check = { replica, cached: informer.items.size, listed: listed.size, ...diff, equal: diff.missing.length + diff.extra.length + diff.stale.length === 0, relists: informer.relists };
    }
    if (check === undefined) throw new Error(`${replica}: no LIST answered for the final check`);
    log(`informer check on ${replica}: ${check.equal ? 'equal' : 'DIFFERENT'} (${check.cached} cached, ${check.listed} listed, ${check.relists} lists in the run)`);
    results.push(check);
  }
  return results;
}

function sum(loads: Record<ReplicaName, Load>, key: keyof LoadCounts): number {
  return Math.round(REPLICAS.reduce((total, replica) => total + loads[replica].counts[key], 0));
}
