/**
 * The isolation suite's report: one line per case, in the order run, with
 * the request, the expected and the actual answer, and PASS/FAIL; written
 * to .test-results/isolation-report.txt (see docs/reliability.md).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoPath } from '../controlplane/paths.js';
import type { Outcome } from './cases.js';

export interface CaseResult {
  readonly group: string;
  readonly name: string;
  readonly request: string;
  readonly expected: Outcome;
  /** The answer, or the error that stopped the case. */
  readonly actual: Outcome;
  /** Forbidden names found in what a tenant received during the case. */
  readonly leaks: readonly string[];
  readonly pass: boolean;
  readonly knownDefect?: string;
}

export const REPORT_PATH = repoPath('.test-results', 'isolation-report.txt');

const oneLine = (value: unknown): string => JSON.stringify(value).replace(/\s+/g, ' ');

export function reportLine(result: CaseResult, index: number): string {
  const verdict = result.pass ? 'PASS' : result.knownDefect === undefined ? 'FAIL' : 'KNOWN-DEFECT';
  const leaks = result.leaks.length === 0 ? '' : ` | leaks ${oneLine(result.leaks)}`;
  const defect = result.knownDefect === undefined ? '' : ` | defect: ${result.knownDefect}`;
  return `${String(index + 1).padStart(3)} ${verdict} | ${result.group} | ${result.name} | ${result.request} | expected ${oneLine(result.expected)} | actual ${oneLine(result.actual)}${leaks}${defect}`;
}

export async function writeReport(results: readonly CaseResult[], total: number): Promise<string> {
  const passed = results.filter((result) => result.pass).length;
  const header = [
    'hostclaim-apiserver isolation suite (test/integration/isolation.test.ts)',
    `cases: ${String(total)}, run: ${String(results.length)}, passed: ${String(passed)}, failed: ${String(results.length - passed)}`,
    'line: <n> PASS|FAIL|KNOWN-DEFECT | group | case | request | expected | actual [| leaks] [| defect]',
    '',
  ];
  await mkdir(path.dirname(REPORT_PATH), { recursive: true });
  await writeFile(REPORT_PATH, `${[...header, ...results.map(reportLine)].join('\n')}\n`);
  return REPORT_PATH;
}
