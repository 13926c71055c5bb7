/**
 * Runs the fuzzer: `concurrency` workers, each a fast-check run of its own
 * seed (seed + worker index) over every family, judging each answer with
 * the oracle and grouping violations in buckets (family, kind, detail).
 * Then the first case of each bucket is replayed from its seed and path and
 * shrunk by fast-check to a minimal case that still shows the same
 * violation. Finally the server must still be running and ready.
 */
import fc from 'fast-check';
import { TENANTS, type DevEnvironment } from '../controlplane/environment.js';
import type { RawClients } from '../support/raw-http.js';
import { fuzzCase } from './generators/index.js';
import { abbreviate, describeCase, FAMILIES, type Family, type FuzzCase } from './model.js';
import { judge, knownDifference, type Observation, type Outcome, type Violation } from './oracle.js';
import { Worker } from './worker.js';

export interface FuzzOptions {
  readonly seed: number;
  readonly runs: number;
  /** Workers, one per tenant namespace (at most the number of tenants). */
  readonly concurrency: number;
  /** Time fast-check may spend shrinking one bucket's first case. */
  readonly shrinkSeconds: number;
  /** Buckets shrunk at most (the rest keep their first, unshrunk case). */
  readonly maxShrinks: number;
  readonly log?: (line: string) => void;
}

export interface Bucket {
  readonly key: string;
  readonly family: Family;
  readonly violation: Violation;
  count: number;
  /** Where the first case came from, to replay it. */
  readonly origin: { readonly worker: number; readonly seed: number; readonly path: string };
  example: string;
  shrunk: boolean;
}

export interface FuzzReport {
  readonly seed: number;
  readonly runs: number;
  readonly concurrency: number;
  readonly durationMs: number;
  readonly msPerThousand: number;
  readonly casesByFamily: Record<Family, number>;
  readonly violationsByFamily: Record<Family, number>;
  readonly knownDifferences: Record<string, number>;
  /** Deletions left terminating (Foreground/Orphan, a case's finalizer) that the workers finished, per side: the environment runs no garbage collector. */
  readonly settledDeletions: { readonly ours: number; readonly reference: number };
  readonly buckets: Bucket[];
  readonly serverRunning: boolean;
  readonly readyz: string;
}

const bucketKey = (family: Family, v: Violation): string => `${family} ${v.kind}: ${v.detail}`;

function describeOutcome(outcome: Outcome | undefined): string {
  if (outcome === undefined) return '(not compared)';
  if ('error' in outcome) return `no answer: ${outcome.error}`;
  return `${outcome.status} ${abbreviate(outcome.body, 400)}`;
}

export function describeObservation(o: Observation): string {
  return [describeCase(o.testCase), `  ours:   ${describeOutcome(o.ours)}`, `  kube:   ${describeOutcome(o.theirs)}`, ...(o.changed === undefined ? [] : [`  changed: ${o.changed}`])].join('\n');
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

const zeroByFamily = (): Record<Family, number> => Object.fromEntries(FAMILIES.map((f) => [f, 0])) as Record<Family, number>;

export async function runFuzz(env: DevEnvironment, clients: RawClients, options: FuzzOptions): Promise<FuzzReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const concurrency = Math.max(1, Math.min(options.concurrency, TENANTS.length));
  const workers = Array.from({ length: concurrency }, (_, i) => new Worker(i, env, clients, TENANTS[i % TENANTS.length] ?? 'tenant-a', TENANTS[(i + 1) % TENANTS.length] ?? 'tenant-b'));
  const buckets = new Map<string, Bucket>();
  const casesByFamily = zeroByFamily();
  const violationsByFamily = zeroByFamily();
  const knownDifferences: Record<string, number> = {};
  let done = 0;

  const observe = async (worker: Worker, c: FuzzCase): Promise<{ observation: Observation; violations: Violation[] }> => {
    if (env.serverProcess?.running !== true) {
      await env.restartServer();
      const violation: Violation = { kind: 'server-down', detail: 'the server process exited' };
      return { observation: { testCase: c, ours: { error: 'server was down before this case' } }, violations: [violation] };
    }
    const observation = await worker.run(c);
    return { observation, violations: judge(observation) };
  };

  await Promise.all(
    workers.map(async (worker) => {
      const seed = options.seed + worker.index;
      const runs = Math.floor(options.runs / concurrency) + (worker.index < options.runs % concurrency ? 1 : 0);
      let index = 0;
      await fc.assert(
        fc.asyncProperty(fuzzCase, async (c) => {
          const path = String(index++);
          const { observation, violations } = await observe(worker, c);
          casesByFamily[c.family]++;
          if (violations.length > 0) violationsByFamily[c.family]++;
          const { ours, theirs } = observation;
          if (c.comparable && theirs !== undefined && !('error' in ours) && !('error' in theirs)) {
            const known = knownDifference(c, ours, theirs);
            if (known !== undefined) knownDifferences[known.name] = (knownDifferences[known.name] ?? 0) + 1;
          }
          for (const v of violations) {
            const key = bucketKey(c.family, v);
            const bucket = buckets.get(key);
            if (bucket === undefined) {
              buckets.set(key, { key, family: c.family, violation: v, count: 1, origin: { worker: worker.index, seed, path }, example: describeObservation(observation), shrunk: false });
              log(`new: ${key}`);
            } else bucket.count++;
          }
          if (++done % 250 === 0) log(`${done}/${options.runs} cases, ${buckets.size} buckets, ${Math.round((Date.now() - started) / done)} ms/case`);
          return true;
        }),
        { seed, numRuns: runs, endOnFailure: true },
      );
    }),
  );
  const runMs = Date.now() - started;

  const toShrink = [...buckets.values()].slice(0, options.maxShrinks);
  await Promise.all(
    workers.map(async (worker) => {
      for (const bucket of toShrink.filter((b) => b.origin.worker === worker.index)) {
        await shrink(bucket, (c) => observe(worker, c), options.shrinkSeconds);
        log(`shrunk: ${bucket.key}`);
      }
    }),
  );

  const readyz = await clients.direct({ user: 'fuzz-readiness' }, { path: '/readyz', headers: { Accept: 'text/plain' } }).then(
    (r) => `${r.status} ${r.body.trim()}`,
    (error: unknown) => `no answer: ${String(error)}`,
  );
  return {
    seed: options.seed,
    runs: done,
    concurrency,
    durationMs: Date.now() - started,
    msPerThousand: done === 0 ? 0 : Math.round((runMs / done) * 1000),
    casesByFamily,
    violationsByFamily,
    knownDifferences,
    settledDeletions: { ours: sum(workers.map((w) => w.settled.ours)), reference: sum(workers.map((w) => w.settled.reference)) },
    buckets: [...buckets.values()],
    serverRunning: env.serverProcess?.running === true,
    readyz,
  };
}

/** Replays the bucket's first case and lets fast-check shrink it while it still shows the same violation. */
async function shrink(bucket: Bucket, observe: (c: FuzzCase) => Promise<{ observation: Observation; violations: Violation[] }>, seconds: number): Promise<void> {
  let smallest: Observation | undefined;
  await fc.check(
    fc.asyncProperty(fuzzCase, async (c) => {
      if (c.family !== bucket.family) return true;
      const { observation, violations } = await observe(c);
      const same = violations.some((v) => bucketKey(c.family, v) === bucket.key);
      if (same) smallest = observation;
      return !same;
    }),
    { seed: bucket.origin.seed, path: bucket.origin.path, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false },
  );
  if (smallest !== undefined) {
    bucket.example = describeObservation(smallest);
    bucket.shrunk = true;
  }
}

/** The report as text: figures, then each bucket with its (minimal) example. */
export function formatReport(report: FuzzReport): string {
  const families = FAMILIES.map((f) => `  ${f.padEnd(16)} ${String(report.casesByFamily[f]).padStart(7)} cases, ${report.violationsByFamily[f]} with violations`);
  const buckets = report.buckets.map((b) => `\n[${b.count}×] ${b.key}${b.shrunk ? ' (shrunk)' : ''}\n${b.example}`);
  return [
    `fuzz: seed ${report.seed}, ${report.runs} cases, concurrency ${report.concurrency}, ${(report.durationMs / 1000).toFixed(0)} s (${(report.msPerThousand / 1000).toFixed(1)} s per 1,000 cases before shrinking)`,
    ...families,
    `known differences: ${JSON.stringify(report.knownDifferences)}`,
    `deletions left terminating and finished by the workers: ours ${report.settledDeletions.ours}, reference ${report.settledDeletions.reference}`,
    `server running: ${report.serverRunning}; /readyz: ${report.readyz}`,
    `${report.buckets.length} violation buckets`,
    ...buckets,
  ].join('\n');
}
