/**
 * The benchmark of `make bench` (test/bench/), run on a tiny scenario with
 * short phases: every figure it reports is produced, finite and positive, the
 * results JSON is well-formed, and the Markdown summary is written between
 * the markers. No timing thresholds: how fast is `make bench`'s question.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { smokeConfig } from '../bench/config.js';
import { BEGIN_MARKER, END_MARKER, markdownSummary, updateDocument } from '../bench/report.js';
import { RESULTS_SCHEMA, runBench, type BenchResults } from '../bench/run.js';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';

const binDir = inject('controlPlaneBinDir');
let env: DevEnvironment;
let results: BenchResults;
let tempDir: string;

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `bench-smoke-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, bareMetalOperatorCrds: true });
  tempDir = await mkdtemp(path.join(os.tmpdir(), 'bench-smoke-out-'));
  results = await runBench(env, smokeConfig, () => undefined);
}, 900_000);

afterAll(async () => {
  await env.stop();
  await rm(tempDir, { recursive: true, force: true });
});

const READS = ['claimGet', 'namespaceList', 'tableList', 'selectedList', 'paginatedList', 'hardwareDataList', 'hardwareDataGet'] as const;
const RUN_FIGURES = ['requests', 'seconds', 'throughput', 'p50Ms', 'p99Ms', 'controlPlaneCpuMsPerRequest', 'clientCpuMsPerRequest'] as const;

function expectPositive(value: unknown, what: string): void {
  expect(typeof value, what).toBe('number');
  expect(Number.isFinite(value) && (value as number) > 0, `${what} = ${String(value)}`).toBe(true);
}

describe('make bench on a small scenario', () => {
  it('measures every read for us and for the backing resource, without errors', () => {
    expect(Object.keys(results.reads).sort()).toEqual([...READS].sort());
    for (const key of READS) {
      const comparison = results.reads[key];
      for (const side of ['us', 'direct'] as const) {
        for (const figure of RUN_FIGURES) expectPositive(comparison[side][figure], `${key}.${side}.${figure}`);
        expect(comparison[side].errors, `${key}.${side} errors`).toBe(0);
        expect(comparison.runs[side]).toHaveLength(smokeConfig.repetitions);
      }
      expectPositive(comparison.us.serverCpuMsPerRequest, `${key}.us.serverCpuMsPerRequest`);
      for (const figure of ['throughput', 'p50Ms', 'p99Ms', 'controlPlaneCpuMsPerRequest'] as const) expectPositive(comparison.ratio[figure], `${key}.ratio.${figure}`);
    }
  });

  it('measures the cluster-wide LIST of a user with 3 namespaces beside a single-namespace LIST, both answered exactly', () => {
    const { scopedList } = results;
    expect({ namespaces: scopedList.namespaces, readable: scopedList.readable }).toEqual({ namespaces: smokeConfig.namespaces, readable: 3 });
    for (const side of ['clusterWide', 'namespaced'] as const) {
      for (const figure of RUN_FIGURES) expectPositive(scopedList[side][figure], `scopedList.${side}.${figure}`);
      expectPositive(scopedList[side].serverCpuMsPerRequest, `scopedList.${side}.serverCpuMsPerRequest`);
      // A list with other than exactly the user's claims counts as an error.
      expect(scopedList[side].errors, `scopedList.${side} errors`).toBe(0);
      expect(scopedList.runs[side]).toHaveLength(smokeConfig.repetitions);
    }
    for (const figure of ['throughput', 'p50Ms', 'serverCpuMsPerRequest'] as const) expectPositive(scopedList.ratio[figure], `scopedList.ratio.${figure}`);
  });

  it('measures watch fan-out on both sides with every event delivered', () => {
    const watchers = smokeConfig.watchers;
    // Namespaced watchers all watch the one written namespace; cluster-wide ones see every write.
    const expected = smokeConfig.watchWrites * watchers;
    for (const side of ['us', 'direct'] as const) {
      const run = results.watch[side];
      expect(run).toMatchObject({ watchers, refused: 0, refusedStatuses: {}, errorEvents: 0 });
      expect(run.expected).toBe(expected);
      expect(run.delivered).toBe(expected);
      expectPositive(run.p50Ms, `watch.${side}.p50Ms`);
      expectPositive(run.p99Ms, `watch.${side}.p99Ms`);
      expectPositive(run.establishMs, `watch.${side}.establishMs`);
      expect(Number.isFinite(run.rssAddedMb), `watch.${side}.rssAddedMb`).toBe(true);
    }
    expectPositive(results.watch.ratio.p99Ms, 'watch.ratio.p99Ms');
  });

  it('binds every new claim, none twice, and measures setup, footprint and pagination', () => {
    expect(results.binding).toMatchObject({ claims: smokeConfig.bindClaims, associated: smokeConfig.bindClaims, doubleBinds: 0 });
    expect(Number.isFinite(results.binding.secondsAfterLastCreate) && results.binding.secondsAfterLastCreate >= 0).toBe(true);
    for (const figure of ['namespacesMs', 'hostsMs', 'serverStartMs', 'claimsMs', 'bindingMs', 'totalMs'] as const) expectPositive(results.setup[figure], `setup.${figure}`);
    expectPositive(results.footprint.readySecondsAfterRestart, 'footprint.readySecondsAfterRestart');
    for (const when of ['rssAfterSetup', 'rssAfterRestart'] as const) {
      for (const figure of ['firstMb', 'settledMb', 'peakMb'] as const) expectPositive(results.footprint[when][figure], `footprint.${when}.${figure}`);
      // The peak is the most the process ever held, so no later sample exceeds it.
      expect(results.footprint[when].peakMb).toBeGreaterThanOrEqual(results.footprint[when].settledMb);
      expect(Number.isInteger(results.footprint[when].settledAfterSeconds) && results.footprint[when].settledAfterSeconds >= 0).toBe(true);
    }
    // CPU is counted in 10 ms ticks: a step that only polled once may show none.
    expect(results.setup.steps.map((step) => step.seconds > 0 && Object.values(step.cpuSeconds).every((seconds) => Number.isFinite(seconds) && seconds >= 0))).toEqual([true, true, true, true, true]);
    // Idle CPU is counted in 10 ms ticks over 5 s: it may be 0 on a quiet server.
    for (const idle of Object.values(results.footprint.idleCpuMsPerSecond)) expect(Number.isFinite(idle) && idle >= 0).toBe(true);
    expectPositive(results.footprint.quiesceSeconds, 'footprint.quiesceSeconds');
    // The peer replica answered the measured server's watermark rounds during the reads (ticks: may be 0 on so short a run).
    expect(results.peers.count).toBe(1);
    expect(Number.isFinite(results.peers.cpuSecondsDuringReads) && results.peers.cpuSecondsDuringReads >= 0).toBe(true);
    expect(results.hardwareDataPagination.error).toBeUndefined();
    expectPositive(results.hardwareDataPagination.firstPageItems, 'hardwareDataPagination.firstPageItems');
  });

  it('judges every done-criterion of the issue', () => {
    expect(results.criteria).toHaveLength(16);
    for (const criterion of results.criteria) {
      expect(criterion.figure, criterion.criterion).not.toMatch(/n\/a|NaN/);
      expect(typeof criterion.pass).toBe('boolean');
    }
  });

  it('writes well-formed results JSON and the summary between the markers', async () => {
    const json = JSON.parse(JSON.stringify(results)) as BenchResults;
    expect(json.schema).toBe(RESULTS_SCHEMA);
    expect(json.config).toEqual(smokeConfig);
    expect(json.machine.cores).toBe(os.availableParallelism());
    expect(json.machine.loadAverageBefore).toHaveLength(3);
    expect(json.commit).toMatch(/^[0-9a-f]{7,}(-dirty)?$/);
    const document = path.join(tempDir, 'performance.md');
    await writeFile(document, `# Performance\n\nintro\n\n${BEGIN_MARKER}\nold\n${END_MARKER}\n\nafter\n`);
    await updateDocument(document, markdownSummary(results));
    const text = await readFile(document, 'utf8');
    expect(text).not.toContain('\nold\n');
    expect(text.startsWith('# Performance\n\nintro\n\n')).toBe(true);
    expect(text.endsWith(`${END_MARKER}\n\nafter\n`)).toBe(true);
    for (const criterion of results.criteria) expect(text).toContain(`| ${criterion.criterion} | ${criterion.figure} | ${criterion.pass ? 'PASS' : 'FAIL'} |`);
  });
});
