// Sizes and timings of one benchmark run. Defaults are issue #12's scenario;
// every value can be overridden from the environment (BENCH_*), and the
// smoke run in `make test` uses smokeConfig().

export interface BenchConfig {
  /** Tenant namespaces; each gets `claimsPerNamespace` HostClaims. */
  readonly namespaces: number;
  readonly claimsPerNamespace: number;
  /** BareMetalHosts in total, spread over `hostNamespaces` infrastructure namespaces. */
  readonly hosts: number;
  readonly hostNamespaces: number;
  /** Hosts bound to a claim by the binder during setup (≤ hosts, ≤ claims). */
  readonly hostsBound: number;
  /** Concurrent writes while building the scenario. */
  readonly setupConcurrency: number;
  /** How long setup waits for the binder to bind `hostsBound` claims. */
  readonly setupBindTimeoutMs: number;
  readonly warmupMs: number;
  readonly phaseMs: number;
  readonly repetitions: number;
  readonly getConcurrency: number;
  readonly listConcurrency: number;
  readonly watchers: number;
  /** Of `watchers`, how many watch every namespace (as admin); the rest watch `watchNamespaces` tenant namespaces. */
  readonly clusterWideWatchers: number;
  readonly watchNamespaces: number;
  readonly watchWrites: number;
  readonly watchWriteIntervalMs: number;
  /** New claims of the binding figure (against free hosts; ≤ hosts - hostsBound). */
  readonly bindClaims: number;
  readonly bindTimeoutMs: number;
  /** Page size of the cluster-wide paginated LIST. */
  readonly pageLimit: number;
  /** RSS counts as settled after a burst once it held still this long (rss.ts). */
  readonly rssSettleSeconds: number;
  /**
   * Replicas started beside the measured server before the read phases
   * (deploy/ runs 3): each consistent read of ours then asks them for their
   * write watermarks (src/backing/replica-watermarks.ts). 0: the server alone.
   */
  readonly peerReplicas: number;
}

export const defaultConfig: BenchConfig = {
  namespaces: 1000,
  claimsPerNamespace: 10,
  hosts: 10_000,
  hostNamespaces: 10,
  hostsBound: 5000,
  setupConcurrency: 32,
  setupBindTimeoutMs: 1_800_000,
  warmupMs: 2000,
  phaseMs: 10_000,
  repetitions: 3,
  getConcurrency: 8,
  listConcurrency: 4,
  watchers: 1000,
  clusterWideWatchers: 100,
  watchNamespaces: 1,
  watchWrites: 20,
  watchWriteIntervalMs: 200,
  bindClaims: 1000,
  bindTimeoutMs: 300_000,
  pageLimit: 500,
  rssSettleSeconds: 15,
  peerReplicas: 1,
};

/** A few seconds of every phase on a tiny scenario: proves every figure is produced, not how fast. */
export const smokeConfig: BenchConfig = {
  ...defaultConfig,
  namespaces: 5,
  hosts: 50,
  hostNamespaces: 2,
  hostsBound: 25,
  setupBindTimeoutMs: 120_000,
  warmupMs: 300,
  phaseMs: 1000,
  repetitions: 1,
  watchers: 20,
  clusterWideWatchers: 4,
  watchWrites: 4,
  watchWriteIntervalMs: 100,
  bindClaims: 10,
  bindTimeoutMs: 120_000,
  pageLimit: 20,
  rssSettleSeconds: 2,
  peerReplicas: 1,
};

const ENV_NAMES: Record<keyof BenchConfig, string> = {
  namespaces: 'BENCH_NAMESPACES',
  claimsPerNamespace: 'BENCH_CLAIMS_PER_NAMESPACE',
  hosts: 'BENCH_HOSTS',
  hostNamespaces: 'BENCH_HOST_NAMESPACES',
  hostsBound: 'BENCH_HOSTS_BOUND',
  setupConcurrency: 'BENCH_SETUP_CONCURRENCY',
  setupBindTimeoutMs: 'BENCH_SETUP_BIND_TIMEOUT_MS',
  warmupMs: 'BENCH_WARMUP_MS',
  phaseMs: 'BENCH_PHASE_MS',
  repetitions: 'BENCH_REPETITIONS',
  getConcurrency: 'BENCH_GET_CONCURRENCY',
  listConcurrency: 'BENCH_LIST_CONCURRENCY',
  watchers: 'BENCH_WATCHERS',
  clusterWideWatchers: 'BENCH_CLUSTER_WIDE_WATCHERS',
  watchNamespaces: 'BENCH_WATCH_NAMESPACES',
  watchWrites: 'BENCH_WATCH_WRITES',
  watchWriteIntervalMs: 'BENCH_WATCH_WRITE_INTERVAL_MS',
  bindClaims: 'BENCH_BIND_CLAIMS',
  bindTimeoutMs: 'BENCH_BIND_TIMEOUT_MS',
  pageLimit: 'BENCH_PAGE_LIMIT',
  rssSettleSeconds: 'BENCH_RSS_SETTLE_S',
  peerReplicas: 'BENCH_PEER_REPLICAS',
};

/** Settings that may be 0. */
const MAY_BE_ZERO: ReadonlySet<keyof BenchConfig> = new Set(['peerReplicas']);

/** `base` with every BENCH_* variable set in `env` applied; throws on a value that is not a positive integer. */
export function configFromEnvironment(env: NodeJS.ProcessEnv, base: BenchConfig = defaultConfig): BenchConfig {
  const config: Record<string, number> = { ...base };
  for (const [key, name] of Object.entries(ENV_NAMES)) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const value = Number(text);
    const zeroAllowed = MAY_BE_ZERO.has(key as keyof BenchConfig);
    if (!Number.isSafeInteger(value) || value < 0 || (value === 0 && !zeroAllowed)) {
      throw new Error(`${name}=${text}: expected a ${zeroAllowed ? 'non-negative' : 'positive'} integer`);
    }
    config[key] = value;
  }
  return validated(config as unknown as BenchConfig);
}

export function validated(config: BenchConfig): BenchConfig {
  const claims = config.namespaces * config.claimsPerNamespace;
  const problems = [
    config.hostsBound > config.hosts && 'BENCH_HOSTS_BOUND exceeds BENCH_HOSTS',
    config.hostsBound > claims && 'BENCH_HOSTS_BOUND exceeds the number of claims',
    config.bindClaims > config.hosts - config.hostsBound && 'BENCH_BIND_CLAIMS exceeds the free hosts',
    config.clusterWideWatchers >= config.watchers && 'BENCH_CLUSTER_WIDE_WATCHERS must leave namespaced watchers',
    config.watchNamespaces > config.namespaces && 'BENCH_WATCH_NAMESPACES exceeds BENCH_NAMESPACES',
    config.hostNamespaces > config.hosts && 'BENCH_HOST_NAMESPACES exceeds BENCH_HOSTS',
  ].filter((problem): problem is string => typeof problem === 'string');
  if (problems.length > 0) throw new Error(`benchmark settings: ${problems.join('; ')}`);
  return config;
}
