// Issue #12's "Done when" list, each judged on this run's figures. Ratios are
// us ÷ direct (kube-apiserver serving the backing resource), medians over the
// repetitions. A figure that could not be measured (NaN) fails.
import type { BenchResults } from './run.js';

export interface Criterion {
  readonly criterion: string;
  readonly figure: string;
  readonly pass: boolean;
}

const ratio = (value: number): string => `${value.toFixed(2)}×`;
const ms = (value: number): string => `${value.toFixed(1)} ms`;

export function judge(results: Omit<BenchResults, 'criteria'>): Criterion[] {
  const { reads, scopedList, watch, binding, footprint, hardwareDataPagination: pagination, config } = results;
  const visible = config.hosts - config.hostsBound;
  const check = (criterion: string, figure: string, pass: boolean): Criterion => ({ criterion, figure, pass });
  return [
    check('Control-plane CPU per HostClaim GET ≤ 1.0× direct', `${ratio(reads.claimGet.ratio.controlPlaneCpuMsPerRequest)} (${ms(reads.claimGet.us.controlPlaneCpuMsPerRequest)} vs ${ms(reads.claimGet.direct.controlPlaneCpuMsPerRequest)})`, reads.claimGet.ratio.controlPlaneCpuMsPerRequest <= 1.0),
    check('Control-plane CPU per namespace LIST ≤ 1.0× direct', `${ratio(reads.namespaceList.ratio.controlPlaneCpuMsPerRequest)} (${ms(reads.namespaceList.us.controlPlaneCpuMsPerRequest)} vs ${ms(reads.namespaceList.direct.controlPlaneCpuMsPerRequest)})`, reads.namespaceList.ratio.controlPlaneCpuMsPerRequest <= 1.0),
    check('HostClaim GET p50 ≤ 1.5× direct', `${ratio(reads.claimGet.ratio.p50Ms)} (${ms(reads.claimGet.us.p50Ms)} vs ${ms(reads.claimGet.direct.p50Ms)})`, reads.claimGet.ratio.p50Ms <= 1.5),
    check('Namespace LIST throughput ≥ 1.0× direct', `${ratio(reads.namespaceList.ratio.throughput)} (${reads.namespaceList.us.throughput.toFixed(0)} vs ${reads.namespaceList.direct.throughput.toFixed(0)} req/s)`, reads.namespaceList.ratio.throughput >= 1.0),
    check('Table LIST throughput ≥ 1.0× direct', `${ratio(reads.tableList.ratio.throughput)} (${reads.tableList.us.throughput.toFixed(0)} vs ${reads.tableList.direct.throughput.toFixed(0)} req/s)`, reads.tableList.ratio.throughput >= 1.0),
    check(`HardwareData LIST of ${visible} visible hosts ≤ 1.0× the direct BareMetalHost LIST time (p50)`, `${ratio(reads.hardwareDataList.ratio.p50Ms)} (${ms(reads.hardwareDataList.us.p50Ms)} vs ${ms(reads.hardwareDataList.direct.p50Ms)})`, reads.hardwareDataList.ratio.p50Ms <= 1.0),
    check(
      `Cluster-wide HardwareData LIST paginates (limit=${config.pageLimit})`,
      pagination.error === undefined ? `limit=${pagination.limit}: first page ${pagination.firstPageItems} items, ${(pagination.firstPageBytes / 1e6).toFixed(1)} MB, continue ${pagination.firstPageHasContinue ? 'yes' : 'no'}, next page ${pagination.secondPageOk ? 'ok' : 'not served'}` : `failed: ${pagination.error}`,
      pagination.paginates,
    ),
    check(
      `Cluster-wide LIST by a user with ${scopedList.readable} of ${scopedList.namespaces} namespaces ≤ 2× a single-namespace LIST (p50; issue #9)`,
      `${ratio(scopedList.ratio.p50Ms)} (${ms(scopedList.clusterWide.p50Ms)} vs ${ms(scopedList.namespaced.p50Ms)}); server CPU ${ratio(scopedList.ratio.serverCpuMsPerRequest)}`,
      scopedList.ratio.p50Ms <= 2 && scopedList.clusterWide.errors === 0,
    ),
    check(`${config.watchers} watchers: p99 delivery ≤ 100 ms after a write`, ms(watch.us.p99Ms), watch.us.p99Ms <= 100),
    check(`${config.watchers} watchers: p99 delivery ≤ 1.5× direct`, `${ratio(watch.ratio.p99Ms)} (${ms(watch.us.p99Ms)} vs ${ms(watch.direct.p99Ms)})`, watch.ratio.p99Ms <= 1.5),
    check(
      `${config.watchers} watchers: all established, every event delivered (every repetition)`,
      `worst repetition: ${watch.us.watchers} established, ${watch.us.delivered}/${watch.us.expected} events, ${watch.us.errorEvents} ERROR events`,
      watch.us.watchers === config.watchers && watch.us.delivered === watch.us.expected && watch.us.errorEvents === 0,
    ),
    check(`${config.watchers} watchers: ≤ 20 MB of RSS for them`, `${watch.us.rssAddedMb.toFixed(1)} MB`, watch.us.rssAddedMb <= 20),
    check(
      `Binding: ${binding.claims} claims all Associated ≤ 10 s after the last create`,
      Number.isNaN(binding.secondsAfterLastCreate) ? `${binding.associated}/${binding.claims} Associated within ${config.bindTimeoutMs / 1000} s` : `${binding.secondsAfterLastCreate.toFixed(2)} s`,
      binding.secondsAfterLastCreate <= 10,
    ),
    check('Binding: 0 hosts bound twice', String(binding.doubleBinds), binding.doubleBinds === 0),
    check(
      'RSS per replica ≤ 300 MB at the scenario (settled, idle)',
      `${footprint.rssAfterSetup.settledMb.toFixed(0)} MB after setup, ${footprint.rssAfterRestart.settledMb.toFixed(0)} MB after a restart (5 s after: ${footprint.rssAfterSetup.firstMb.toFixed(0)} / ${footprint.rssAfterRestart.firstMb.toFixed(0)} MB; peak ${Math.max(footprint.rssAfterSetup.peakMb, footprint.rssAfterRestart.peakMb).toFixed(0)} MB)`,
      footprint.rssAfterSetup.settled && footprint.rssAfterRestart.settled && Math.max(footprint.rssAfterSetup.settledMb, footprint.rssAfterRestart.settledMb) <= 300,
    ),
    check('Ready ≤ 10 s after a restart at the scenario', `${footprint.readySecondsAfterRestart.toFixed(2)} s`, footprint.readySecondsAfterRestart <= 10),
  ];
}
