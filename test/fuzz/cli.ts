// `make fuzz`: starts its own control plane and server, runs the fuzzer
// (test/fuzz/runner.ts) and writes the summary. Settings from the environment:
//   FUZZ_RUNS (100000)  FUZZ_SEED (20260515)  FUZZ_CONCURRENCY (2)
//   FUZZ_SHRINK_SECONDS (30)  FUZZ_MAX_SHRINKS (60)
//   FUZZ_REPORT (.test-results/fuzz-summary; .txt and .json are written)
// Exits 1 when any violation was found or the server is not running and ready.
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveControlPlaneBinaries } from '../controlplane/binaries.js';
import { startDevEnvironment } from '../controlplane/environment.js';
import { repoPath } from '../controlplane/paths.js';
import { rawClients } from '../support/raw-http.js';
import { installReferenceCrd } from '../support/reference-crd.js';
import { formatReport, runFuzz } from './runner.js';

function setting(name: string, fallback: number): number {
  const text = process.env[name];
  const parsed = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`${name}=${text ?? ''}: expected a non-negative integer`);
  return parsed;
}

const options = {
  runs: setting('FUZZ_RUNS', 100_000),
  seed: setting('FUZZ_SEED', 20260515),
  concurrency: setting('FUZZ_CONCURRENCY', 2),
  shrinkSeconds: setting('FUZZ_SHRINK_SECONDS', 30),
  maxShrinks: setting('FUZZ_MAX_SHRINKS', 60),
  log: (line: string) => {
    console.log(`[fuzz] ${line}`);
  },
};
const reportBase = process.env.FUZZ_REPORT ?? repoPath('.test-results', 'fuzz-summary');

const { dir: binDir } = await resolveControlPlaneBinaries();
const env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `fuzz-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, controllers: '*,-binder', garbageCollector: false, keepLogs: true, log: options.log });
let failed: boolean;
try {
  await installReferenceCrd(env);
  const report = await runFuzz(env, await rawClients(env), options);
  const text = formatReport(report);
  await mkdir(path.dirname(reportBase), { recursive: true });
  await writeFile(`${reportBase}.txt`, `${text}\n`);
  await writeFile(`${reportBase}.json`, `${JSON.stringify(report, null, 2)}\n`);
  console.log(text);
  console.log(`[fuzz] summary: ${reportBase}.txt, ${reportBase}.json; server log: ${env.serverLogPath}`);
  failed = report.buckets.length > 0 || !report.serverRunning || !report.readyz.startsWith('200');
} finally {
  await env.stop();
}
process.exit(failed ? 1 : 0);
