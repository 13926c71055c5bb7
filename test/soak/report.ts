// The soak's text report: settings, kills, RSS per replica over time,
// growth after warm-up, load and error counts, the informer check, verdict.
import type { SoakResults } from './run.js';

export function textReport(results: SoakResults): string {
  const { config } = results;
  const lines = [
    `hostclaim-apiserver soak, ${results.startedAt} → ${results.finishedAt}`,
    `settings: ${config.minutes} min, leader kill every ${config.killEveryMinutes} min, ${config.watchers} watchers, ${config.namespaces} namespaces × ${config.claimsPerNamespace} claims, ${config.churnHosts} churn hosts, per replica ${config.readers} readers / ${config.writers} writers / ${config.churners} churners, warm-up ${config.warmupMinutes} min, watches on ${config.pooledWatches > 0 ? 'pooled keep-alive connections' : 'a connection each'}`,
    `machine: ${results.machine.cores} cores, load average ${fmt(results.machine.loadAverageBefore)} before, ${fmt(results.machine.loadAverageAfter)} after`,
    '',
    'kills (SIGKILL of the binder leader, then started again):',
    ...(results.kills.length === 0 ? ['  none'] : results.kills.map((k) => `  ${k.atSeconds} s: ${k.replica} pid ${k.killedPid} → ${k.newPid}, serving again after ${k.backAfterSeconds.toFixed(1)} s`)),
    '',
    'RSS (V8 heap used / committed, external memory) in MiB over time:',
    ...rssTable(results),
    '',
    'RSS growth after warm-up (median of the last quarter of samples over the first quarter, at least 3 each):',
    ...(results.rssGrowth.length === 0 ? ['  no process had 6 samples after its warm-up: not judged'] : results.rssGrowth.map((g) => `  ${g.replica} pid ${g.pid}: ${g.baselineMiB} → ${g.finalMiB} MiB (${(100 * g.growth).toFixed(1)} %, ${g.samples} samples)`)),
    '',
    'load:',
    ...Object.entries(results.load).map(([replica, c]) => `  ${replica}: ${c.reads} reads, ${c.writes} writes, ${c.churnCycles} churn cycles (create → Associated → delete → gone; mean bind ${c.churnCycles > 0 ? (c.bindSeconds / c.churnCycles).toFixed(1) : '-'} s)`),
    `  watchers: ${results.watchers.count}, ${results.watchers.events} events, ${results.watchers.relists} lists`,
    '',
    'errors, expected (on a replica between its kill and 15 s after it served again):',
    ...counts(results.errors.expected),
    'errors, unexpected:',
    ...counts(results.errors.unexpected),
    ...results.errors.firstUnexpected.map((e) => `  first: at ${e.atSeconds} s ${e.kind}: ${e.detail}`),
    '',
    'informer check (watch-fed cache of every HostClaim vs a fresh LIST, per replica):',
    ...results.informerCheck.map((c) => `  ${c.replica}: ${c.equal ? 'equal' : 'DIFFERENT'}, ${c.cached} cached, ${c.listed} listed${c.equal ? '' : `; missing ${c.missing.length}, extra ${c.extra.length}, stale ${c.stale.length}`}`),
    '',
    results.failures.length === 0 ? 'PASSED' : `FAILED: ${results.failures.join('; ')}`,
  ];
  return `${lines.join('\n')}\n`;
}

function rssTable(results: SoakResults): string[] {
  const times = [...new Set(results.rss.map((s) => s.atSeconds))];
  return times.map((at) => {
    const row = results.rss.filter((s) => s.atSeconds === at).map((s) => `${s.replica} ${s.rssMiB} (${s.heapUsedMiB ?? '?'} / ${s.heapTotalMiB ?? '?'}, ${s.externalMiB ?? '?'}) pid ${s.pid}`);
    return `  ${String(at).padStart(5)} s: ${row.join(', ')}`;
  });
}

function counts(record: Record<string, number>): string[] {
  const entries = Object.entries(record).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? ['  none'] : entries.map(([kind, count]) => `  ${String(count).padStart(6)}  ${kind}`);
}

function fmt(values: readonly number[]): string {
  return values.map((v) => v.toFixed(1)).join('/');
}
