// Watch fan-out: many concurrent watches (most on a tenant namespace, some
// cluster-wide as admin), then N writes, each a label change on one claim;
// every watcher that should see a write records when its event arrived. The
// delay is from sending the write to receiving the event. The same watches
// and writes on the backing records (kube-apiserver alone) are the baseline.
// The watched process's RSS before opening the watches and after the writes
// gives the memory the watchers cost it.
import type { BenchConfig } from './config.js';
import { H2Client, forEachConcurrently, type WatchAnswer, type WatchStream } from './h2.js';
import { median, percentile, rssBytes } from './load.js';
import { CLAIMS, NAMESPACE_LABEL, RECORDS, tenantNamespace } from './scenario.js';

export const SEQUENCE_LABEL = 'bench.metal3.io/seq';
const SEQUENCE_IN_EVENT = new RegExp(`"${SEQUENCE_LABEL.replace(/[./]/g, '\\$&')}":"([^"]+)"`);
const STREAMS_PER_SESSION = 100;
const DELIVERY_TIMEOUT_MS = 30_000;

export interface WatchRun {
  readonly watchers: number;
  /** Watches the server refused (not counted in `watchers`), and ERROR events received. */
  readonly refused: number;
  /** How many watches were refused with each status (0: the stream failed before an answer). */
  readonly refusedStatuses: Record<string, number>;
  /** 429s with Retry-After (kube-apiserver's API Priority and Fairness shedding a burst) retried after it, as client-go does. */
  readonly retried: number;
  readonly errorEvents: number;
  readonly writes: number;
  readonly expected: number;
  readonly delivered: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** MB of RSS the watched process (hostclaim-apiserver, or kube-apiserver for the baseline) gained; over repetitions, the largest. */
  readonly rssAddedMb: number;
  /** From opening the first watch until every one was answered. */
  readonly establishMs: number;
}

export interface WatchComparison {
  readonly us: WatchRun;
  readonly direct: WatchRun;
  readonly ratio: { p50Ms: number; p99Ms: number };
  readonly runs: { us: WatchRun[]; direct: WatchRun[] };
}

export interface WatchSide {
  readonly name: 'us' | 'direct';
  /** Clients for namespaced and cluster-wide watches (their own sessions: up to 100 streams each). */
  readonly namespacedClient: H2Client;
  readonly clusterClient: H2Client;
  /** Client for the writes. */
  readonly writer: H2Client;
  /** The process whose RSS the watchers add to. */
  readonly watchedPid: () => number;
}

function paths(side: 'us' | 'direct', namespace: string | undefined, resourceVersion: string): string {
  const common = `watch=true&resourceVersion=${resourceVersion}`;
  if (side === 'us') return namespace === undefined ? `${CLAIMS}/hostclaims?${common}` : `${CLAIMS}/namespaces/${namespace}/hostclaims?${common}`;
  return namespace === undefined ? `${RECORDS}?${common}` : `${RECORDS}?${common}&labelSelector=${encodeURIComponent(`${NAMESPACE_LABEL}=${namespace}`)}`;
}

function writePath(side: 'us' | 'direct', namespace: string): string {
  return side === 'us' ? `${CLAIMS}/namespaces/${namespace}/hostclaims/c-0` : `${RECORDS}/${namespace}.c-0`;
}

async function currentResourceVersion(side: WatchSide): Promise<string> {
  const path = side.name === 'us' ? `${CLAIMS}/hostclaims?limit=1` : `${RECORDS}?limit=1`;
  const list = await side.clusterClient.json<{ metadata: { resourceVersion: string } }>({ path });
  return list.metadata.resourceVersion;
}

export async function runWatchFanOut(config: BenchConfig, side: WatchSide, runId: string): Promise<WatchRun> {
  const namespaced = config.watchers - config.clusterWideWatchers;
  const watched = Array.from({ length: config.watchNamespaces }, (_, i) => tenantNamespace(i));
  const sent = new Map<string, number>();
  const delays: number[] = [];
  let delivered = 0;
  let errorEvents = 0;
  const rssBefore = await rssBytes(side.watchedPid());
  const resourceVersion = await currentResourceVersion(side);

  const specs = [
    ...Array.from({ length: namespaced }, (_, i) => ({ namespace: watched[i % watched.length], client: side.namespacedClient })),
    ...Array.from({ length: config.clusterWideWatchers }, () => ({ namespace: undefined, client: side.clusterClient })),
  ];
  const opened = performance.now();
  let retried = 0;
  const streams = specs.map(({ namespace, client }) => {
    const seen = new Set<string>();
    return watchRetrying(client, paths(side.name, namespace, resourceVersion), () => (retried += 1), (line) => {
      const arrived = performance.now();
      if (line.startsWith('{"type":"ERROR"')) {
        errorEvents += 1;
        return;
      }
      const sequence = SEQUENCE_IN_EVENT.exec(line)?.[1];
      if (sequence === undefined || seen.has(sequence)) return;
      const start = sent.get(sequence);
      if (start === undefined) return;
      // The first event carrying this write's label; later ones (the binder's status writes) repeat it.
      seen.add(sequence);
      delivered += 1;
      delays.push(arrived - start);
    });
  });
  try {
    const statuses = await Promise.all(streams.map((stream) => stream.established.then((answer) => answer.status).catch(() => 0)));
    const active = specs.filter((_, i) => statuses[i] === 200);
    const establishMs = performance.now() - opened;
    // Let every watch reach the point where it forwards events (the aggregator connects to us after answering headers).
    await new Promise((resolve) => setTimeout(resolve, 1000));

    let expected = 0;
    const writes = Array.from({ length: config.watchWrites }, (_, i) => i);
    await forEachConcurrently(writes, 1, async (i) => {
      const namespace = watched[i % watched.length] ?? '';
      const sequence = `${runId}-${i}`;
      expected += active.filter((spec) => spec.namespace === undefined || spec.namespace === namespace).length;
      sent.set(sequence, performance.now());
      await side.writer.json({
        method: 'PATCH',
        path: writePath(side.name, namespace),
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ metadata: { labels: { [SEQUENCE_LABEL]: sequence } } }),
      });
      await new Promise((resolve) => setTimeout(resolve, config.watchWriteIntervalMs));
    });
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    while (delivered < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const rssAfter = await rssBytes(side.watchedPid());
    const sorted = delays.sort((a, b) => a - b);
    return {
      watchers: active.length,
      refused: streams.length - active.length,
      refusedStatuses: countBy(statuses.filter((status) => status !== 200).map(String)),
      retried,
      errorEvents,
      writes: config.watchWrites,
      expected,
      delivered,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      rssAddedMb: (rssAfter - rssBefore) / 1e6,
      establishMs,
    };
  } finally {
    for (const stream of streams) stream.close();
  }
}

/**
 * Over the repetitions: timings are medians; the RSS added is the largest;
 * completeness (watches established, events delivered, ERROR events) is
 * the worst repetition's, so a refusal or a lost event in any one of them
 * shows (a median would hide one bad repetition of three).
 */
export function medianWatch(runs: readonly WatchRun[]): WatchRun {
  const of = (pick: (run: WatchRun) => number): number => median(runs.map(pick));
  const shortfall = (run: WatchRun): number => run.refused + (run.expected - run.delivered) + run.errorEvents;
  const worst = runs.reduce((a, b) => (shortfall(b) > shortfall(a) ? b : a));
  return {
    watchers: worst.watchers,
    refused: worst.refused,
    refusedStatuses: worst.refusedStatuses,
    retried: Math.max(...runs.map((r) => r.retried)),
    errorEvents: worst.errorEvents,
    writes: worst.writes,
    expected: worst.expected,
    delivered: worst.delivered,
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    // The largest: a later repetition may reuse heap an earlier one grew, and the criterion is an upper bound.
    rssAddedMb: Math.max(...runs.map((r) => r.rssAddedMb)),
    establishMs: of((r) => r.establishMs),
  };
}

/** As client-go's rest client: a 429 with Retry-After is retried after that many seconds, up to 10 times. */
const MAX_RETRIES = 10;

/** A watch that retries refusals with Retry-After, as client-go does; `established` is the last answer. */
export function watchRetrying(client: Pick<H2Client, 'watch'>, path: string, onRetry: () => void, onLine: (line: string) => void): WatchStream {
  const state: { current?: WatchStream; closed: boolean } = { closed: false };
  // A function, not the field: close() may run during an await, which narrowing does not see.
  const isClosed = (): boolean => state.closed;
  const established = (async (): Promise<WatchAnswer> => {
    for (let attempt = 0; ; attempt++) {
      const stream = client.watch(path, onLine);
      state.current = stream;
      const answer = await stream.established;
      const delaySeconds = answer.status === 429 ? answer.retryAfterSeconds : undefined;
      if (delaySeconds === undefined || attempt === MAX_RETRIES || isClosed()) return answer;
      stream.close();
      onRetry();
      await new Promise((resolve) => setTimeout(resolve, delaySeconds * 1000));
      if (isClosed()) return answer;
    }
  })();
  return {
    established,
    close: () => {
      state.closed = true;
      state.current?.close();
    },
  };
}

function countBy(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

/** Sessions enough for `streams` concurrent streams at 100 per session (below kube-apiserver's per-connection limit). */
export function watchSessions(streams: number): number {
  return Math.max(1, Math.ceil(streams / STREAMS_PER_SESSION));
}
