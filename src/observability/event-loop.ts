/**
 * How long this server itself holds its event loop, measured in the main
 * thread's CPU time rather than wall time. prom-client's
 * nodejs_eventloop_lag_max_seconds (perf_hooks.monitorEventLoopDelay) also
 * counts the time the thread waits for a CPU, which on a busy machine says
 * more about the machine than about this server; the CPU time the thread
 * spends between two turns of a 10 ms timer is an upper bound on the
 * longest task it ran, however busy the machine. (kube-apiserver has no
 * equivalent: goroutines do not share one loop.)
 */
import { Gauge, type Registry } from 'prom-client';

const resolutionMs = 10;

export function registerEventLoopBusyMetric(registry: Registry): void {
  let last = threadCpuMs();
  let longest = 0;
  const timer = setInterval(() => {
    const now = threadCpuMs();
    longest = Math.max(longest, now - last);
    last = now;
  }, resolutionMs);
  timer.unref();
  new Gauge({
    name: 'hostclaim_apiserver_event_loop_busy_max_seconds',
    help: `Most CPU time the event loop's thread spent between two turns of a ${resolutionMs} ms timer since the last scrape: an upper bound on the longest task that held the loop, not inflated by a busy machine.`,
    registers: [registry],
    collect() {
      this.set(longest / 1000);
      longest = 0;
    },
  });
}

function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}
