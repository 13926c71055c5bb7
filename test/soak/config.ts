// Settings of one soak run (`make soak`), each from a SOAK_* variable.
// Defaults are issue 10's: one hour, a leader kill every 10 minutes, 1,000
// watchers; the smoke test in `make test` uses smokeSoakConfig.

export interface SoakConfig {
  readonly minutes: number;
  /** SIGKILL the binder's leader (and start it again) this often; 0: never. */
  readonly killEveryMinutes: number;
  readonly sampleSeconds: number;
  /** RSS growth is judged on each process from this long after it started. */
  readonly warmupMinutes: number;
  readonly watchers: number;
  readonly namespaces: number;
  readonly claimsPerNamespace: number;
  /** Free hosts the churn binds claims to (plus one bound per namespace in setup). */
  readonly churnHosts: number;
  /** Concurrent loops of each kind, per replica. */
  readonly readers: number;
  readonly writers: number;
  readonly churners: number;
  /** Pause of each loop between two operations. */
  readonly pauseMs: number;
  /** RSS growth after warm-up above which the run fails. */
  readonly maxRssGrowth: number;
  /**
   * 1 (the default): a watch reuses an idle keep-alive connection of its
   * client, as client-go's transport and the aggregator's do; 0: each watch
   * opens a TLS connection of its own (a handshake per watch, the harsher
   * pattern, kept for comparison: docs/reliability.md, session 11).
   */
  readonly pooledWatches: number;
}

export const defaultSoakConfig: SoakConfig = {
  minutes: 60,
  killEveryMinutes: 10,
  sampleSeconds: 60,
  warmupMinutes: 5,
  watchers: 1000,
  namespaces: 20,
  claimsPerNamespace: 5,
  churnHosts: 40,
  readers: 4,
  writers: 2,
  churners: 2,
  pauseMs: 100,
  maxRssGrowth: 0.05,
  pooledWatches: 1,
};

/** Well under a minute of load: proves every figure is produced, not that nothing grows. */
export const smokeSoakConfig: SoakConfig = {
  ...defaultSoakConfig,
  minutes: 0.75,
  killEveryMinutes: 0.25,
  sampleSeconds: 5,
  warmupMinutes: 0,
  watchers: 20,
  namespaces: 2,
  claimsPerNamespace: 2,
  churnHosts: 4,
  readers: 1,
  writers: 1,
  churners: 1,
  pauseMs: 200,
  // Not judged: without a warm-up, a fresh process's first minute of growth is all there is.
  maxRssGrowth: 10,
};

const ENV_NAMES: Record<keyof SoakConfig, string> = {
  minutes: 'SOAK_MINUTES',
  killEveryMinutes: 'SOAK_KILL_EVERY_MINUTES',
  sampleSeconds: 'SOAK_SAMPLE_SECONDS',
  warmupMinutes: 'SOAK_WARMUP_MINUTES',
  watchers: 'SOAK_WATCHERS',
  namespaces: 'SOAK_NAMESPACES',
  claimsPerNamespace: 'SOAK_CLAIMS_PER_NAMESPACE',
  churnHosts: 'SOAK_CHURN_HOSTS',
  readers: 'SOAK_READERS',
  writers: 'SOAK_WRITERS',
  churners: 'SOAK_CHURNERS',
  pauseMs: 'SOAK_PAUSE_MS',
  maxRssGrowth: 'SOAK_MAX_RSS_GROWTH',
  pooledWatches: 'SOAK_POOLED_WATCHES',
};

/** `base` with every SOAK_* variable set in `env` applied; throws on a value that is not a non-negative number. */
export function soakConfigFromEnvironment(env: NodeJS.ProcessEnv, base: SoakConfig = defaultSoakConfig): SoakConfig {
  const config: Record<string, number> = { ...base };
  for (const [key, name] of Object.entries(ENV_NAMES)) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name}=${text}: expected a non-negative number`);
    config[key] = value;
  }
  const result = config as unknown as SoakConfig;
  if (result.minutes <= 0 || result.sampleSeconds <= 0 || result.namespaces < 1) throw new Error('SOAK_MINUTES, SOAK_SAMPLE_SECONDS and SOAK_NAMESPACES must be positive');
  return result;
}
