// The read comparisons: each request through the aggregator (us) beside the
// request kube-apiserver answers from the backing resource directly (the
// HostClaimRecord CRD in the storage namespace, or BareMetalHosts for
// HardwareData), run alternately, repeated, and reduced to medians.
import type { BenchConfig } from './config.js';
import type { H2Client, H2Request } from './h2.js';
import { median, runLoad, type CpuProcesses, type Operation, type Run } from './load.js';
import { CLAIMS, HALF_LABEL, METAL3, NAMESPACE_LABEL, POOL_LABEL, RECORDS, host, tenantNamespace } from './scenario.js';

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io';

export type Figures = Omit<Run, 'firstError'>;

export interface Comparison {
  readonly title: string;
  readonly concurrency: number;
  readonly us: Figures;
  readonly direct: Figures;
  /** us ÷ direct for each figure (throughput: > 1 is better for us; latency and CPU: < 1 is). */
  readonly ratio: { throughput: number; p50Ms: number; p99Ms: number; controlPlaneCpuMsPerRequest: number };
  readonly runs: { us: Run[]; direct: Run[] };
}

export interface ReadClients {
  readonly tenant: H2Client;
  readonly admin: H2Client;
}

interface ComparisonSpec {
  readonly key: string;
  readonly title: string;
  readonly concurrency: number;
  readonly us: Operation;
  readonly direct: Operation;
}

async function fetchOk(client: H2Client, request: H2Request): Promise<Buffer> {
  const response = await client.request(request);
  if (response.status < 200 || response.status > 299) {
    throw new Error(`${request.path}: ${response.status} ${response.body.toString('utf8').slice(0, 200)}`);
  }
  return response.body;
}

/** The list's continue token, read from the metadata at the head of the body (kube writes metadata before items). */
export function continueOf(body: Buffer): string {
  const head = body.subarray(0, 4096).toString('utf8');
  const items = head.search(/"(items|rows)":/);
  const metadata = items < 0 ? head : head.slice(0, items);
  return /"continue":"([^"]*)"/.exec(metadata)?.[1] ?? '';
}

/** Every page of a list; returns the number of pages. */
export async function readAllPages(client: H2Client, path: string, headers?: Record<string, string>): Promise<number> {
  let token = '';
  let pages = 0;
  const separator = path.includes('?') ? '&' : '?';
  do {
    const body = await fetchOk(client, { path: `${path}${token === '' ? '' : `${separator}continue=${encodeURIComponent(token)}`}`, ...(headers === undefined ? {} : { headers }) });
    token = continueOf(body);
    pages += 1;
  } while (token !== '');
  return pages;
}

function specs(config: BenchConfig, clients: ReadClients): ComparisonSpec[] {
  const { tenant, admin } = clients;
  // Spread requests over namespaces and claims (7919 is prime, so every namespace comes up).
  const namespaceOf = (sequence: number): string => tenantNamespace((sequence * 7919) % config.namespaces);
  const claimOf = (sequence: number): string => `c-${sequence % config.claimsPerNamespace}`;
  const scoped = (namespace: string, more = ''): string => encodeURIComponent(`${NAMESPACE_LABEL}=${namespace}${more}`);
  const table = { accept: TABLE_ACCEPT };
  const freeHost = (sequence: number) => host(config, config.hostsBound + ((sequence * 7919) % (config.hosts - config.hostsBound)));
  const get = (client: H2Client, path: string, headers?: Record<string, string>) => fetchOk(client, { path, ...(headers === undefined ? {} : { headers }) }).then(() => undefined);
  return [
    {
      key: 'claimGet',
      title: 'HostClaim GET',
      concurrency: config.getConcurrency,
      us: (s) => get(tenant, `${CLAIMS}/namespaces/${namespaceOf(s)}/hostclaims/${claimOf(s)}`),
      direct: (s) => get(tenant, `${RECORDS}/${namespaceOf(s)}.${claimOf(s)}`),
    },
    {
      key: 'namespaceList',
      title: `namespace LIST (${config.claimsPerNamespace} claims)`,
      concurrency: config.listConcurrency,
      us: (s) => get(tenant, `${CLAIMS}/namespaces/${namespaceOf(s)}/hostclaims`),
      direct: (s) => get(tenant, `${RECORDS}?labelSelector=${scoped(namespaceOf(s))}`),
    },
    {
      key: 'tableList',
      title: 'namespace LIST as Table',
      concurrency: config.listConcurrency,
      us: (s) => get(tenant, `${CLAIMS}/namespaces/${namespaceOf(s)}/hostclaims`, table),
      direct: (s) => get(tenant, `${RECORDS}?labelSelector=${scoped(namespaceOf(s))}`, table),
    },
    {
      key: 'selectedList',
      title: 'label-selected LIST (half of a namespace)',
      concurrency: config.listConcurrency,
      us: (s) => get(tenant, `${CLAIMS}/namespaces/${namespaceOf(s)}/hostclaims?labelSelector=${encodeURIComponent(`${HALF_LABEL}=even`)}`),
      direct: (s) => get(tenant, `${RECORDS}?labelSelector=${scoped(namespaceOf(s), `,${HALF_LABEL}=even`)}`),
    },
    {
      key: 'paginatedList',
      title: `cluster-wide LIST as admin, limit=${config.pageLimit}, all pages`,
      concurrency: config.listConcurrency,
      us: () => readAllPages(admin, `${CLAIMS}/hostclaims?limit=${config.pageLimit}`).then(() => undefined),
      direct: () => readAllPages(admin, `${RECORDS}?limit=${config.pageLimit}`).then(() => undefined),
    },
    {
      key: 'hardwareDataList',
      title: `HardwareData LIST in one namespace (${config.hosts - config.hostsBound} free hosts) vs LIST of those BareMetalHosts`,
      concurrency: config.listConcurrency,
      us: (s) => get(tenant, `${CLAIMS}/namespaces/${namespaceOf(s)}/hardwaredata`),
      direct: () => get(admin, `${METAL3}/baremetalhosts?labelSelector=${encodeURIComponent(`${POOL_LABEL}=b`)}`),
    },
    {
      key: 'hardwareDataGet',
      title: 'HardwareData GET vs BareMetalHost GET',
      concurrency: config.getConcurrency,
      us: (s) => {
        const { namespace, name } = freeHost(s);
        return get(tenant, `${CLAIMS}/namespaces/${namespaceOf(s)}/hardwaredata/${namespace}.${name}`);
      },
      direct: (s) => {
        const { namespace, name } = freeHost(s);
        return get(admin, `${METAL3}/namespaces/${namespace}/baremetalhosts/${name}`);
      },
    },
  ];
}

export type ReadKey = 'claimGet' | 'namespaceList' | 'tableList' | 'selectedList' | 'paginatedList' | 'hardwareDataList' | 'hardwareDataGet';

export async function runReads(
  config: BenchConfig,
  clients: ReadClients,
  processes: () => CpuProcesses,
  log: (line: string) => void,
): Promise<Record<ReadKey, Comparison>> {
  const results: Partial<Record<ReadKey, Comparison>> = {};
  for (const spec of specs(config, clients)) {
    const runs: { us: Run[]; direct: Run[] } = { us: [], direct: [] };
    for (let repetition = 0; repetition < config.repetitions; repetition++) {
      // Alternate which side goes first, so a drift in machine load hits both alike.
      const order: ('us' | 'direct')[] = repetition % 2 === 0 ? ['us', 'direct'] : ['direct', 'us'];
      for (const side of order) {
        const run = await runLoad(spec[side], { concurrency: spec.concurrency, warmupMs: config.warmupMs, durationMs: config.phaseMs }, processes());
        runs[side].push(run);
        log(
          `${spec.key} ${side} #${repetition + 1}: ${run.throughput.toFixed(1)} req/s, p50 ${run.p50Ms.toFixed(1)} ms, p99 ${run.p99Ms.toFixed(1)} ms, control plane ${run.controlPlaneCpuMsPerRequest.toFixed(2)} ms CPU/req` +
            (run.errors > 0 ? `, ${run.errors} errors (${run.firstError ?? ''})` : ''),
        );
      }
    }
    const us = medianFigures(runs.us);
    const direct = medianFigures(runs.direct);
    results[spec.key as ReadKey] = {
      title: spec.title,
      concurrency: spec.concurrency,
      us,
      direct,
      ratio: {
        throughput: us.throughput / direct.throughput,
        p50Ms: us.p50Ms / direct.p50Ms,
        p99Ms: us.p99Ms / direct.p99Ms,
        controlPlaneCpuMsPerRequest: us.controlPlaneCpuMsPerRequest / direct.controlPlaneCpuMsPerRequest,
      },
      runs,
    };
  }
  return results as Record<ReadKey, Comparison>;
}

export function medianFigures(runs: readonly Run[]): Figures {
  const of = (pick: (run: Run) => number): number => median(runs.map(pick));
  return {
    requests: of((r) => r.requests),
    errors: of((r) => r.errors),
    seconds: of((r) => r.seconds),
    throughput: of((r) => r.throughput),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    controlPlaneCpuMsPerRequest: of((r) => r.controlPlaneCpuMsPerRequest),
    serverCpuMsPerRequest: of((r) => r.serverCpuMsPerRequest),
    clientCpuMsPerRequest: of((r) => r.clientCpuMsPerRequest),
  };
}

export interface Pagination {
  /** The limit of the checked request: `pageLimit`, or half the items when everything fit in one page of `pageLimit`. */
  readonly limit: number;
  /** Items on the first page of a cluster-wide HardwareData LIST. */
  readonly firstPageItems: number;
  readonly firstPageBytes: number;
  readonly firstPageHasContinue: boolean;
  /** The second page, read with the first page's token, answered 2xx. */
  readonly secondPageOk: boolean;
  readonly paginates: boolean;
  /** Why the list could not be read (a timeout, the server going away), if it could not. */
  readonly error?: string;
}

const PAGINATION_TIMEOUT_MS = 120_000;

/**
 * Whether a cluster-wide HardwareData LIST as admin honours `limit` (the
 * issue's 358 MB single answer): the first page has at most `limit` items
 * and a continue token that the next request accepts. When everything fits
 * in one page of `pageLimit` (no token needed), it is asked again with half
 * the items as the limit, so the check can still fail. Run last among the
 * reads: a server that ignores `limit` may not survive the answer.
 */
export async function hardwareDataPagination(config: BenchConfig, admin: H2Client): Promise<Pagination> {
  try {
    const first = await paginationCheck(admin, config.pageLimit);
    if (first.firstPageHasContinue || first.firstPageItems > config.pageLimit || first.firstPageItems < 2) return first;
    return await paginationCheck(admin, Math.floor(first.firstPageItems / 2));
  } catch (error) {
    return { limit: config.pageLimit, firstPageItems: Number.NaN, firstPageBytes: Number.NaN, firstPageHasContinue: false, secondPageOk: false, paginates: false, error: String(error).slice(0, 300) };
  }
}

async function paginationCheck(admin: H2Client, limit: number): Promise<Pagination> {
  const path = `${CLAIMS}/hardwaredata?limit=${limit}`;
  const first = await fetchOk(admin, { path, timeoutMs: PAGINATION_TIMEOUT_MS });
  const list = JSON.parse(first.toString('utf8')) as { items: unknown[]; metadata: { continue?: string } };
  const token = list.metadata.continue ?? '';
  const secondPageOk = token !== '' && (await admin.request({ path: `${path}&continue=${encodeURIComponent(token)}`, timeoutMs: PAGINATION_TIMEOUT_MS })).status === 200;
  return {
    limit,
    firstPageItems: list.items.length,
    firstPageBytes: first.length,
    firstPageHasContinue: token !== '',
    secondPageOk,
    paginates: list.items.length <= limit && secondPageOk,
  };
}
