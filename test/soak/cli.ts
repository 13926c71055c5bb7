// `make soak`: starts its own control plane (baremetal-operator's CRDs
// installed, hosts created directly) and hostclaim-apiserver behind the
// aggregator, runs the soak (run.ts) with the SOAK_* settings (config.ts),
// writes .test-results/soak.json and .test-results/soak.txt, and exits 1 on
// unexpected errors, RSS growth above SOAK_MAX_RSS_GROWTH after warm-up, or
// a watch-fed cache that differs from a fresh list.
//   SOAK_PRESET=smoke   the smoke test's settings (SOAK_* still override them)
//   SOAK_RESULTS        the files' path without extension (.test-results/soak)
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveControlPlaneBinaries } from '../controlplane/binaries.js';
import { startDevEnvironment } from '../controlplane/environment.js';
import { repoPath } from '../controlplane/paths.js';
import { defaultSoakConfig, smokeSoakConfig, soakConfigFromEnvironment } from './config.js';
import { textReport } from './report.js';
import { runSoak } from './run.js';

const started = Date.now();
const log = (line: string): void => {
  console.log(`[soak ${((Date.now() - started) / 1000).toFixed(0).padStart(5)}s] ${line}`);
};
const preset = process.env.SOAK_PRESET ?? '';
if (preset !== '' && preset !== 'smoke') throw new Error(`SOAK_PRESET=${preset}: only "smoke" is known`);
const config = soakConfigFromEnvironment(process.env, preset === 'smoke' ? smokeSoakConfig : defaultSoakConfig);
const results = process.env.SOAK_RESULTS ?? repoPath('.test-results', 'soak');
log(`settings: ${JSON.stringify(config)}`);

const { dir: binDir } = await resolveControlPlaneBinaries();
const env = await startDevEnvironment({ workDir: path.join(os.tmpdir(), `soak-${process.pid}`), serverEntry: 'dist/src/main.js', binDir, bareMetalOperatorCrds: true, keepLogs: true, log });
const outcome = await runSoak(env, config, log).finally(() => env.stop());
await mkdir(path.dirname(results), { recursive: true });
await writeFile(`${results}.json`, `${JSON.stringify(outcome, null, 2)}\n`);
const report = textReport(outcome);
await writeFile(`${results}.txt`, report);
console.log(`\n${report}`);
log(`results: ${results}.json, ${results}.txt; logs in ${env.logDir}`);
process.exit(outcome.failures.length > 0 ? 1 : 0);
