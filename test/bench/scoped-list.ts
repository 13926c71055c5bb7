// Issue #9's figure: a cluster-wide LIST by a user who may read 3 of the
// scenario's namespaces, beside a single-namespace LIST by the same user,
// both through the aggregator, run alternately, repeated, medians. The
// cluster-wide list must contain exactly the claims of those 3 namespaces
// (a wrong answer counts as an error, not as a fast request).
import type { BenchConfig } from './config.js';
import { H2Client, type TlsIdentity } from './h2.js';
import { runLoad, type CpuProcesses, type Run } from './load.js';
import { medianFigures, type Figures } from './reads.js';
import { CLAIMS, tenantNamespace } from './scenario.js';

export const SCOPED_USER = 'bench-scoped';
const READABLE = 3;

export interface ScopedListComparison {
  readonly namespaces: number;
  readonly readable: number;
  readonly clusterWide: Figures;
  readonly namespaced: Figures;
  /** cluster-wide ÷ namespaced (p50 and server CPU: < 2 is the target; throughput: > 0.5). */
  readonly ratio: { throughput: number; p50Ms: number; serverCpuMsPerRequest: number };
  readonly runs: { clusterWide: Run[]; namespaced: Run[] };
}

/** The namespaces the scoped user administers: spread over the scenario. */
export function readableNamespaces(config: BenchConfig): string[] {
  const step = Math.max(1, Math.floor(config.namespaces / READABLE));
  return Array.from({ length: Math.min(READABLE, config.namespaces) }, (_, i) => tenantNamespace(i * step));
}

/** RoleBindings making SCOPED_USER admin of readableNamespaces(). */
export async function bindScopedUser(config: BenchConfig, admin: H2Client): Promise<void> {
  for (const namespace of readableNamespaces(config)) {
    const response = await admin.request({
      method: 'POST',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'bench-scoped-admin', namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: SCOPED_USER }],
      }),
    });
    if (response.status !== 201 && response.status !== 409) throw new Error(`RoleBinding in ${namespace}: ${response.status} ${response.body.toString('utf8').slice(0, 200)}`);
  }
}

export async function runScopedList(
  config: BenchConfig,
  origin: string,
  identity: TlsIdentity,
  processes: () => CpuProcesses,
  log: (line: string) => void,
): Promise<ScopedListComparison> {
  const client = new H2Client(origin, identity, 2);
  const readable = readableNamespaces(config);
  const expectedItems = readable.length * config.claimsPerNamespace;
  const list = async (path: string, items: number): Promise<void> => {
    const response = await client.request({ path });
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.body.toString('utf8').slice(0, 200)}`);
    const got = (JSON.parse(response.body.toString('utf8')) as { items: unknown[] }).items.length;
    if (got !== items) throw new Error(`${path}: ${got} items, expected ${items}`);
  };
  const sides = {
    clusterWide: () => list(`${CLAIMS}/hostclaims`, expectedItems),
    namespaced: (sequence: number) => list(`${CLAIMS}/namespaces/${readable[sequence % readable.length] ?? ''}/hostclaims`, config.claimsPerNamespace),
  };
  const runs: { clusterWide: Run[]; namespaced: Run[] } = { clusterWide: [], namespaced: [] };
  try {
    for (let repetition = 0; repetition < config.repetitions; repetition++) {
      const order: ('clusterWide' | 'namespaced')[] = repetition % 2 === 0 ? ['clusterWide', 'namespaced'] : ['namespaced', 'clusterWide'];
      for (const side of order) {
        const run = await runLoad(sides[side], { concurrency: config.listConcurrency, warmupMs: config.warmupMs, durationMs: config.phaseMs }, processes());
        runs[side].push(run);
        log(
          `scopedList ${side} #${repetition + 1}: ${run.throughput.toFixed(1)} req/s, p50 ${run.p50Ms.toFixed(1)} ms, server ${run.serverCpuMsPerRequest.toFixed(2)} ms CPU/req` +
            (run.errors > 0 ? `, ${run.errors} errors (${run.firstError ?? ''})` : ''),
        );
      }
    }
  } finally {
    client.close();
  }
  const clusterWide = medianFigures(runs.clusterWide);
  const namespaced = medianFigures(runs.namespaced);
  return {
    namespaces: config.namespaces,
    readable: readable.length,
    clusterWide,
    namespaced,
    ratio: {
      throughput: clusterWide.throughput / namespaced.throughput,
      p50Ms: clusterWide.p50Ms / namespaced.p50Ms,
      serverCpuMsPerRequest: clusterWide.serverCpuMsPerRequest / namespaced.serverCpuMsPerRequest,
    },
    runs,
  };
}
