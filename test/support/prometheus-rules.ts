// The alerting rules of deploy/monitoring/prometheus-rules.yaml and the
// series each one selects, so tests can check every metric (and label) a
// rule names against what the server and kube-apiserver really export.
// A PromQL reading just deep enough for that: the vector selectors
// `name{label="value",...}` of an expression (Prometheus' own parser,
// promql/parser, defines the grammar this follows).
import fs from 'node:fs';
import { parse } from 'yaml';
import { repoPath } from '../controlplane/paths.js';

export const PROMETHEUS_RULES_FILE = repoPath('deploy', 'monitoring', 'prometheus-rules.yaml');

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleGroup {
  name: string;
  rules: AlertingRule[];
}

export interface VectorSelector {
  metric: string;
  /** The label names its matchers test. */
  labels: string[];
}

export function readRuleGroups(file = PROMETHEUS_RULES_FILE): RuleGroup[] {
  return (parse(fs.readFileSync(file, 'utf8')) as { groups: RuleGroup[] }).groups;
}

/** PromQL words that are not metric names when not followed by `(`. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);
const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
/** Label lists of grouping and vector matching: `by (le, verb)`, `on (name)`, `group_left (x)`. */
const LABEL_LIST = /\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;
/** Range and subquery brackets: `[5m]`, `[1h:1m]`. */
const RANGE = /\[[^\]]*\]/g;
/** Numbers and durations (`offset 5m`). */
const NUMBER = /(?<![A-Za-z_:0-9])\d+(\.\d+)?([eE][+-]?\d+)?(ms|[smhdwy])?(?![A-Za-z_:0-9])/g;
/** A name, optionally its matchers, and what follows (a `(` makes it a function or aggregation). */
const NAME = /([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^}]*\})?\s*(\()?/g;
const MATCHER = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*""\s*$/;

export function vectorSelectors(expr: string): VectorSelector[] {
  const text = expr.replace(STRING, '""').replace(LABEL_LIST, ' ').replace(RANGE, ' ').replace(NUMBER, ' ');
  const selectors: VectorSelector[] = [];
  for (const [, name = '', matchers, call] of text.matchAll(NAME)) {
    if (call !== undefined || KEYWORDS.has(name.toLowerCase())) continue;
    selectors.push({ metric: name, labels: matchers === undefined ? [] : labelNames(matchers, expr) });
  }
  return selectors;
}

function labelNames(matchers: string, expr: string): string[] {
  const inner = matchers.slice(1, -1).trim();
  if (inner === '') return [];
  return inner.split(',').map((matcher) => {
    const name = MATCHER.exec(matcher)?.[1];
    if (name === undefined) throw new Error(`cannot read the matcher "${matcher}" in ${expr}`);
    return name;
  });
}

/**
 * Metric names in Prometheus' text exposition format: every sample's name,
 * and for `# TYPE` lines the series a histogram or summary exposes even
 * before its first observation.
 */
export function exposedSeries(exposition: string): Map<string, Set<string>> {
  const series = new Map<string, Set<string>>();
  const add = (name: string, labels: string[]): void => {
    const known = series.get(name) ?? new Set<string>();
    for (const label of labels) known.add(label);
    series.set(name, known);
  };
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) {
      const [, name = '', kind] = type;
      const suffixes = kind === 'histogram' ? ['_bucket', '_sum', '_count'] : kind === 'summary' ? ['', '_sum', '_count'] : [''];
      for (const suffix of suffixes) add(name + suffix, []);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s/.exec(line);
    if (sample === null) throw new Error(`not a sample line: ${line}`);
    add(sample[1] ?? '', [...(sample[3] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)="/g)].map((match) => match[1] ?? ''));
  }
  return series;
}
