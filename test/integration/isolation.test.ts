/**
 * The adversarial isolation suite (issue 10, item 2): table-driven cases in
 * test/isolation/groups/, each asserting the exact answer kube-apiserver's
 * rules give (code, reason, message or body), against the real control
 * plane and aggregator with the binder running. Whatever a tenant receives
 * in any case is also scanned for infrastructure and other-tenant names.
 * One line per case goes to .test-results/isolation-report.txt.
 *
 * Groups run in this order (later ones create objects earlier ones list).
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CaseGroup, IsolationCase, Outcome } from '../isolation/cases.js';
import { clusterWide } from '../isolation/groups/cluster-wide.js';
import { crossNamespace } from '../isolation/groups/cross-namespace.js';
import { hostErrors } from '../isolation/groups/host-errors.js';
import { identity } from '../isolation/groups/identity.js';
import { leaks, leaksIn } from '../isolation/groups/leaks.js';
import { names } from '../isolation/groups/names.js';
import { references } from '../isolation/groups/references.js';
import { selectors } from '../isolation/groups/selectors.js';
import { sharedHosts } from '../isolation/groups/shared-hosts.js';
import { tokens } from '../isolation/groups/tokens.js';
import { writes } from '../isolation/groups/writes.js';
import { writeReport, type CaseResult } from '../isolation/report.js';
import { startWorld, type World } from '../isolation/world.js';

const groups: readonly CaseGroup[] = [identity, crossNamespace, clusterWide, selectors, tokens, names, writes, references, hostErrors, sharedHosts, leaks];
const total = groups.reduce((sum, group) => sum + group.cases.length, 0);
const binDir = inject('controlPlaneBinDir');
const results: CaseResult[] = [];
let world: World;

beforeAll(async () => {
  world = await startWorld(binDir);
}, 300_000);

afterAll(async () => {
  await writeReport(results, total);
  await world.stop();
});

it('has at least 200 cases, each named once', () => {
  const caseNames = groups.flatMap((group) => group.cases.map((c) => `${group.name} / ${c.name}`));
  expect(new Set(caseNames).size).toBe(caseNames.length);
  expect(total).toBeGreaterThanOrEqual(200);
});

async function runCase(group: CaseGroup, testCase: IsolationCase): Promise<void> {
  world.takeExchanges();
  let actual: Outcome;
  try {
    actual = await testCase.run(world);
  } catch (error) {
    actual = { error: error instanceof Error ? error.message : String(error) };
  }
  const found = world.takeExchanges().flatMap((exchange) => leaksIn(exchange.response, exchange.viewer, exchange.request).map((term) => `${exchange.viewer} saw "${term}"`));
  const leaked = [...new Set(found)];
  const pass = isDeepStrictEqual(actual, testCase.expected) && leaked.length === 0;
  results.push({ group: group.name, name: testCase.name, request: testCase.request, expected: testCase.expected, actual, leaks: leaked, pass, ...(testCase.knownDefect === undefined ? {} : { knownDefect: testCase.knownDefect }) });
  expect(actual).toEqual(testCase.expected);
  expect(leaked).toEqual([]);
}

for (const group of groups) {
  describe(group.name, () => {
    for (const testCase of group.cases) {
      const test = testCase.knownDefect === undefined ? it : it.fails;
      test(testCase.name, () => runCase(group, testCase), 120_000);
    }
  });
}
