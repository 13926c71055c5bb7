/**
 * The seeded fuzz subset of issue 10 item 1 (test/fuzz): generated bodies,
 * patches, query parameters, headers and paths, through the aggregator and
 * directly, each compared with kube-apiserver's answer on the reference CRD.
 * `make fuzz` runs the same generators for ≥ 100,000 cases; docs/reliability.md
 * explains the oracle. The failure message lists every violation bucket with
 * its shrunk (minimal) case.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startDevEnvironment, type DevEnvironment } from '../controlplane/environment.js';
import { repoPath } from '../controlplane/paths.js';
import { formatReport, runFuzz, type FuzzReport } from '../fuzz/runner.js';
import { rawClients } from '../support/raw-http.js';
import { installReferenceCrd } from '../support/reference-crd.js';

const SEED = 20260515;
/** The whole report, examples included; the failure message carries only the buckets' keys and first example. */
const REPORT_PATH = repoPath('.test-results', 'fuzz-report.txt');
const RUNS = 2_000;

const binDir = inject('controlPlaneBinDir');
let env: DevEnvironment;
let report: FuzzReport;

beforeAll(async () => {
  env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `fuzz-test-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder', garbageCollector: false });
  await installReferenceCrd(env);
  report = await runFuzz(env, await rawClients(env), { seed: SEED, runs: RUNS, concurrency: 2, shrinkSeconds: 3, maxShrinks: 24 });
  const text = formatReport(report);
  console.log(text);
  await mkdir(path.dirname(REPORT_PATH), { recursive: true });
  await writeFile(REPORT_PATH, `${text}\n`);
}, 900_000);

afterAll(async () => {
  await env.stop();
});

it(`ran ${RUNS} seeded cases and the server is still running and ready`, () => {
  expect(report.runs).toBe(RUNS);
  expect(report.serverRunning).toBe(true);
  expect(report.readyz).toBe('200 ok');
});

it('no crash, no 5xx, only Status refusals with kube\'s code and reason, nothing changed by a refused write', () => {
  // Keys in the diff and one example in the message: CI shows the end of the output only.
  const first = report.buckets[0];
  const message = first === undefined ? '' : `first bucket's case (all in ${REPORT_PATH}):\n${first.example}`;
  // Each key with our answer to its example: a 5xx's message tells this server's answer from the aggregator's.
  const ours = (example: string): string => (example.split('\n').find((line) => line.trimStart().startsWith('ours:')) ?? '').trim().slice(0, 300);
  expect(report.buckets.map((b) => `[${b.count}×] ${b.key} | ${ours(b.example)}`), message).toEqual([]);
});
