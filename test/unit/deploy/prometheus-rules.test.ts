/**
 * deploy/monitoring/prometheus-rules.yaml: every rule is complete, and every
 * metric the server-side group names is one the server exports on /metrics
 * (the registry of src/observability/metrics.ts is what /metrics serves).
 * The aggregation group is checked against a real kube-apiserver in
 * test/integration/operations-doc.test.ts.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../../controlplane/paths.js';
import { ApiServerMetrics } from '../../../src/observability/metrics.js';
import { exposedSeries, readRuleGroups, vectorSelectors } from '../../support/prometheus-rules.js';

/** Series Prometheus itself writes for every scrape target. */
const PROMETHEUS_SYNTHETIC = new Set(['up']);
/** Target labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

describe('vectorSelectors', () => {
  it('finds the metric and matcher labels of each selector, not functions, aggregations, grouping labels or numbers', () => {
    expect(
      vectorSelectors(`histogram_quantile(0.99, sum by (le, verb) (rate(a_seconds_bucket{job="x",verb!~"WATCH|CONNECT"}[5m]))) > 1`),
    ).toEqual([{ metric: 'a_seconds_bucket', labels: ['job', 'verb'] }]);
    expect(vectorSelectors('sum(rate(b_total{code=~"5..", job = "x"}[5m])) / sum(rate(b_total[5m])) > 0.01')).toEqual([
      { metric: 'b_total', labels: ['code', 'job'] },
      { metric: 'b_total', labels: [] },
    ]);
    expect(vectorSelectors('max by (name) (c{name="a,b}"}) == 1 and on (name) d offset 5m')).toEqual([
      { metric: 'c', labels: ['name'] },
      { metric: 'd', labels: [] },
    ]);
    expect(vectorSelectors('absent(up{job="x"} == 1) or e > 0.8 * 1024 * 1e3')).toEqual([
      { metric: 'up', labels: ['job'] },
      { metric: 'e', labels: [] },
    ]);
  });

  it('refuses a matcher it cannot read rather than skipping it', () => {
    expect(() => vectorSelectors('a{job}')).toThrow('cannot read the matcher "job" in a{job}');
  });
});

describe('exposedSeries', () => {
  it('lists sample names with their labels, and the series of histograms declared without samples', () => {
    const series = exposedSeries(
      [
        '# HELP h_seconds x',
        '# TYPE h_seconds histogram',
        '# TYPE c_total counter',
        'c_total{code="200",verb="GET"} 3',
        'g 1',
        '',
      ].join('\n'),
    );
    expect(Object.fromEntries([...series].map(([name, labels]) => [name, [...labels]]))).toEqual({
      h_seconds_bucket: [],
      h_seconds_sum: [],
      h_seconds_count: [],
      c_total: ['code', 'verb'],
      g: [],
    });
  });
});

describe('deploy/monitoring/prometheus-rules.yaml', () => {
  const groups = readRuleGroups();

  it('has the server group and the aggregation group, every rule with an expression, a severity and a summary', () => {
    expect(groups.map((group) => group.name)).toEqual(['hostclaim-apiserver', 'hostclaim-apiserver-aggregation']);
    for (const rule of groups.flatMap((group) => group.rules)) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^HostClaimAPIServ(er|ice)[A-Za-z]+$/);
      expect(vectorSelectors(rule.expr).length, rule.alert).toBeGreaterThan(0);
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.['severity']);
      expect(rule.annotations?.['summary'], rule.alert).toBeTruthy();
    }
  });

  it('names in the server group only metrics the server exports (or Prometheus writes), selected by its scrape job', async () => {
    const exported = exposedSeries(await new ApiServerMetrics().registry.metrics());
    const [serverGroup] = groups;
    const selectors = (serverGroup?.rules ?? []).flatMap((rule) => vectorSelectors(rule.expr).map((selector) => ({ rule: rule.alert, ...selector })));
    const unknown = selectors.filter((selector) => !PROMETHEUS_SYNTHETIC.has(selector.metric) && !exported.has(selector.metric));
    expect(unknown).toEqual([]);
    // Every selector is limited to the server's scrape job: no other target's series of the same (kube) names.
    expect(selectors.filter((selector) => !selector.labels.includes('job'))).toEqual([]);
    expect(TARGET_LABELS).toContain('job');
  });
});

describe('docs/operations.md, "Monitoring"', () => {
  it('tables only metrics the server exports, besides those it marks as Prometheus\' or kube-apiserver\'s', async () => {
    const markdown = fs.readFileSync(repoPath('docs', 'operations.md'), 'utf8');
    const section = markdown.slice(markdown.indexOf('\n## Monitoring\n'), markdown.indexOf('\n## Troubleshooting\n'));
    const firstCells = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split(' | ')[0] ?? '');
    const own = firstCells.filter((cell) => !cell.includes("kube-apiserver's") && !cell.includes('(Prometheus)'));
    const names = own.flatMap((cell) => [...cell.matchAll(/`([a-z_:]+)(\{[^}]*\})?`/g)].map((match) => match[1] ?? ''));
    expect(names.length).toBeGreaterThanOrEqual(10);
    const exported = exposedSeries(await new ApiServerMetrics().registry.metrics());
    // A histogram is named by its family; its series are <name>_bucket, _sum and _count.
    expect(names.filter((name) => !exported.has(name) && !exported.has(`${name}_bucket`))).toEqual([]);
  });
});
