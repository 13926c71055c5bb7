// `make bench`: starts its own control plane (with baremetal-operator's CRDs,
// baremetal-operator itself not running) and hostclaim-apiserver behind the
// aggregator, runs the benchmark (run.ts) at the sizes of issue #12 (or the
// BENCH_* overrides, see config.ts), prints the summary, writes
// .bench-results/bench.json and the summary into docs/performance.md.
//   BENCH_PRESET=smoke   the smoke test's tiny scenario (BENCH_* still override it)
//   BENCH_RESULTS (.bench-results/bench.json)   BENCH_DOC (docs/performance.md; "-" to leave it alone)
//   BENCH_PHASES=binding   only the scenario and the binding figure, printed as JSON (nothing written)
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveControlPlaneBinaries } from '../controlplane/binaries.js';
import { startDevEnvironment } from '../controlplane/environment.js';
import { repoPath } from '../controlplane/paths.js';
import { configFromEnvironment, defaultConfig, smokeConfig } from './config.js';
import { markdownSummary, updateDocument } from './report.js';
import { runBench, runBindingOnly } from './run.js';

const started = Date.now();
const log = (line: string): void => {
  console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}`);
};
const preset = process.env.BENCH_PRESET ?? '';
if (preset !== '' && preset !== 'smoke') throw new Error(`BENCH_PRESET=${preset}: only "smoke" is known`);
const phases = process.env.BENCH_PHASES ?? '';
if (phases !== '' && phases !== 'binding') throw new Error(`BENCH_PHASES=${phases}: only "binding" is known`);
const config = configFromEnvironment(process.env, preset === 'smoke' ? smokeConfig : defaultConfig);
const resultsFile = process.env.BENCH_RESULTS ?? repoPath('.bench-results', 'bench.json');
const documentFile = process.env.BENCH_DOC ?? repoPath('docs', 'performance.md');
log(`settings: ${JSON.stringify(config)}`);

const { dir: binDir } = await resolveControlPlaneBinaries();
const env = await startDevEnvironment({
  workDir: path.join(os.tmpdir(), `bench-${process.pid}`),
  serverEntry: 'dist/src/main.js',
  binDir,
  bareMetalOperatorCrds: true,
  keepLogs: true,
  log,
});
try {
  if (phases === 'binding') {
    console.log(JSON.stringify(await runBindingOnly(env, config, log), null, 2));
  } else {
    const results = await runBench(env, config, log);
    await mkdir(path.dirname(resultsFile), { recursive: true });
    await writeFile(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    const summary = markdownSummary(results);
    console.log(`\n${summary}\n`);
    if (documentFile !== '-') await updateDocument(documentFile, summary);
    log(`results: ${resultsFile}${documentFile === '-' ? '' : `, summary in ${documentFile}`}; logs in ${env.logDir}`);
  }
} finally {
  await env.stop();
}
