/**
 * Prints one closing line for the whole run from vitest's JSON reports
 * ("N passed, N failed, N skipped"), so CI sees a single total across the
 * unit and integration projects. Exits non-zero if a report is missing.
 */
import { readFileSync } from 'node:fs';

interface VitestJsonReport {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numPendingTests: number;
  readonly numTodoTests: number;
}

const totals = { passed: 0, failed: 0, skipped: 0 };
for (const file of process.argv.slice(2)) {
  const report = JSON.parse(readFileSync(file, 'utf8')) as VitestJsonReport;
  totals.passed += report.numPassedTests;
  totals.failed += report.numFailedTests;
  totals.skipped += report.numPendingTests + report.numTodoTests;
}
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
