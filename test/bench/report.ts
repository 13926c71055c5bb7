// The results as a Markdown section: printed by `make bench` and written
// between the markers in docs/performance.md, so the document always shows
// the last full run with its machine, date, commit and load.
import { readFile, writeFile } from 'node:fs/promises';
import type { Comparison, Figures } from './reads.js';
import { describeRss } from './rss.js';
import type { BenchResults } from './run.js';
import type { WatchRun } from './watch.js';

export const BEGIN_MARKER = '<!-- bench:results:begin (written by `make bench`; edits here are overwritten) -->';
export const END_MARKER = '<!-- bench:results:end -->';

const n = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function side(figures: Figures, withServer: boolean): string {
  const base = `${n(figures.throughput)} req/s, p50 ${n(figures.p50Ms)} ms, p99 ${n(figures.p99Ms)} ms; control plane ${n(figures.controlPlaneCpuMsPerRequest, 2)} ms CPU/req`;
  const server = withServer ? `; server ${n(figures.serverCpuMsPerRequest, 2)} ms CPU/req` : '';
  const errors = figures.errors > 0 ? `; **${figures.errors} errors**` : '';
  return `${base}${server}${errors}`;
}

function readRow(comparison: Comparison): string {
  const { ratio } = comparison;
  return `| ${comparison.title} (concurrency ${comparison.concurrency}) | ${side(comparison.us, true)} | ${side(comparison.direct, false)} | throughput ${n(ratio.throughput, 2)}×, p50 ${n(ratio.p50Ms, 2)}×, CPU ${n(ratio.controlPlaneCpuMsPerRequest, 2)}× |`;
}

function watchCell(run: WatchRun): string {
  const statuses = Object.entries(run.refusedStatuses)
    .map(([status, count]) => `${count}× ${status === '0' ? 'no answer' : status}`)
    .join(', ');
  const problems = run.refused + run.errorEvents > 0 ? `; **worst repetition: ${run.refused} watches refused (${statuses || 'none'}), ${run.errorEvents} ERROR events**` : '';
  const retried = run.retried > 0 ? ` (${run.retried} after a 429 from API Priority and Fairness, retried as client-go does)` : '';
  return `p50 ${n(run.p50Ms)} ms, p99 ${n(run.p99Ms)} ms; ${run.delivered}/${run.expected} events; +${n(run.rssAddedMb)} MB RSS; all established in ${n(run.establishMs, 0)} ms${retried}${problems}`;
}

export function markdownSummary(results: BenchResults): string {
  const { machine, config, setup, reads, scopedList, watch, binding, footprint, peers } = results;
  const claims = config.namespaces * config.claimsPerNamespace;
  const lines = [
    `Run ${results.startedAt} – ${results.finishedAt}, commit \`${results.commit}\`, Node ${machine.node}.`,
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${n(machine.memoryGb, 0)} GB. Load average before the run ${machine.loadAverageBefore.map((l) => n(l, 2)).join(' / ')}, after ${machine.loadAverageAfter.map((l) => n(l, 2)).join(' / ')} (1/5/15 min); also running when it started: ${machine.otherProcesses.kubeApiservers} other kube-apiservers, ${machine.otherProcesses.etcds} other etcds, ${machine.otherProcesses.nodes} other Node processes. Figures from a shared machine are noisy: compare ratios, and CPU per request (counted per process) before throughput.`,
    '',
    `Scenario: ${config.namespaces} tenant namespaces, ${claims} HostClaims (${config.claimsPerNamespace} per namespace), ${config.hosts} BareMetalHosts in ${config.hostNamespaces} namespaces, ${config.hostsBound} bound; ${config.repetitions} repetitions of ${config.phaseMs / 1000} s per phase after ${config.warmupMs / 1000} s of warm-up; medians.`,
    peers.count === 0
      ? 'The measured server ran alone: its consistent reads asked no peer for a write watermark.'
      : `Beside the measured server ran ${peers.count} more replica(s), which its consistent reads asked for their write watermarks (not counted in "server CPU"; they spent ${n(peers.cpuSecondsDuringReads)} CPU seconds during the read phases).`,
    `Setup: ${n(setup.totalMs / 1000)} s. Where the time went (wall seconds; CPU seconds of control plane / hostclaim-apiserver / bench):`,
    ...setup.steps.map((step) => `- ${step.step}: ${n(step.seconds)} s (CPU ${n(step.cpuSeconds.controlPlane)} / ${n(step.cpuSeconds.server)} / ${n(step.cpuSeconds.client)})`),
    '',
    '| Request | Through the aggregator (us) | kube-apiserver serving the backing resource | us ÷ direct |',
    '|---|---|---|---|',
    ...Object.values(reads).map(readRow),
    `| ${config.watchers} watches (${config.clusterWideWatchers} cluster-wide, the others on ${config.watchNamespaces} namespace(s)), ${config.watchWrites} writes: delay from write to event | ${watchCell(watch.us)} | ${watchCell(watch.direct)} | p50 ${n(watch.ratio.p50Ms, 2)}×, p99 ${n(watch.ratio.p99Ms, 2)}× |`,
    '',
    `Cluster-wide LIST by a user who may read ${scopedList.readable} of ${scopedList.namespaces} namespaces (${scopedList.readable * config.claimsPerNamespace} claims), through the aggregator: ${side(scopedList.clusterWide, true)}. A single-namespace LIST by the same user: ${side(scopedList.namespaced, true)}. Ratio: p50 ${n(scopedList.ratio.p50Ms, 2)}×, throughput ${n(scopedList.ratio.throughput, 2)}×, server CPU ${n(scopedList.ratio.serverCpuMsPerRequest, 2)}×.`,
    '',
    `Binding: ${binding.associated}/${binding.claims} new claims Associated, the last ${n(binding.secondsAfterLastCreate, 2)} s after the last create (creating them took ${n(binding.createSeconds)} s); ${binding.doubleBinds} hosts bound twice.`,
    `Footprint: hostclaim-apiserver RSS after setup ${describeRss(footprint.rssAfterSetup)}; after a restart ${describeRss(footprint.rssAfterRestart)}; /readyz ${n(footprint.readySecondsAfterRestart, 2)} s after the restart. Before the first phase the bench waited ${n(footprint.quiesceSeconds, 0)} s for the control plane to become quiet; then, with no client requests, it spent ${n(footprint.idleCpuMsPerSecond.controlPlane, 0)} ms of CPU per second and hostclaim-apiserver ${n(footprint.idleCpuMsPerSecond.server, 0)} ms/s (included in every CPU-per-request figure, on both sides).`,
    '',
    '| Done when (issue #12) | This run | |',
    '|---|---|---|',
    ...results.criteria.map((c) => `| ${c.criterion} | ${c.figure} | ${c.pass ? 'PASS' : 'FAIL'} |`),
    '| The cross-replica watch-resume test passes in `make test`; docs/architecture.md describes the caches | not a benchmark figure | — |',
  ];
  return lines.join('\n');
}

/** Replaces the text between the markers of `file` with `section`. */
export async function updateDocument(file: string, section: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const begin = text.indexOf(BEGIN_MARKER);
  const end = text.indexOf(END_MARKER);
  if (begin < 0 || end < begin) throw new Error(`${file}: the bench result markers are missing`);
  await writeFile(file, `${text.slice(0, begin + BEGIN_MARKER.length)}\n${section}\n${text.slice(end)}`);
}
