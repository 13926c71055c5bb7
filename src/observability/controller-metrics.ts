/**
 * The binder's metrics, under the names client-go (leader election, work
 * queue) and controller-runtime (reconciles) give them, so the dashboards
 * and alerts operators keep for controllers work for it too. Every series
 * exists from the start, at 0, as controller-runtime initialises its own:
 * a replica that never led exports `leader_election_master_status 0`, not
 * nothing.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What a work queue reports (src/controllers/work-queue.ts). */
export interface WorkQueueObserver {
  /** A key entered the queue (not one already queued or being processed). */
  added(): void;
  depth(keys: number): void;
  /** A worker took a key that had waited this long in the queue; the work in progress is told how it ended. */
  started(waitedSeconds: number): WorkInProgress;
}

/** One reconcile a worker is running. */
export interface WorkInProgress {
  /** It ended: how, and how long it took. */
  finished(result: ReconcileOutcome, seconds: number): void;
}

/** controller-runtime's `result` label; `requeue_after`: the reconcile asked to look again later. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue_after';

const outcomes: readonly ReconcileOutcome[] = ['success', 'error', 'requeue_after'];
// controller-runtime's buckets for a work queue's queue and work durations (10 ns to 1,000 s).
const queueBuckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000];
// controller-runtime's buckets for controller_runtime_reconcile_time_seconds.
const reconcileBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];

export class ControllerMetrics {
  private readonly leaderStatus: Gauge;
  private readonly adds: Counter;
  private readonly queueDepth: Gauge;
  private readonly retries: Counter;
  private readonly reconciles: Counter;
  private readonly reconcileErrors: Counter;
  private readonly reconcileTime: Histogram;
  private readonly queueDuration: Histogram;
  private readonly workDuration: Histogram;
  private readonly unfinishedWork: Gauge;
  private readonly longestRunning: Gauge;
  /** Per queue name, when each reconcile in progress started (performance.now()). */
  private readonly running = new Map<string, Set<{ readonly since: number }>>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.queueDuration = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested', labelNames: ['name'], buckets: queueBuckets, registers });
    this.workDuration = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames: ['name'], buckets: queueBuckets, registers });
    const refresh = (): void => {
      this.refreshRunning();
    };
    this.unfinishedWork = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ['name'],
      registers,
      collect: refresh,
    });
    this.longestRunning = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name'],
      registers,
      collect: refresh,
    });
    this.leaderStatus = new Gauge({ name: 'leader_election_master_status', help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.', labelNames: ['name'], registers });
    this.adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
    this.queueDepth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers });
    this.retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers });
    this.reconciles = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'], registers });
    this.reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'], registers });
    this.reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'], buckets: reconcileBuckets, registers });
  }

  /** A leader election by `lease` name; returns what to call when this replica starts and stops leading. */
  leaderElection(lease: string): { leading(isLeader: boolean): void } {
    this.leaderStatus.set({ name: lease }, 0);
    return {
      leading: (isLeader) => {
        this.leaderStatus.set({ name: lease }, isLeader ? 1 : 0);
      },
    };
  }

  /** The observer of the work queue of the controller `name`. */
  workQueue(name: string): WorkQueueObserver {
    this.adds.inc({ name }, 0);
    this.queueDepth.set({ name }, 0);
    this.retries.inc({ name }, 0);
    this.reconcileErrors.inc({ controller: name }, 0);
    for (const result of outcomes) this.reconciles.inc({ controller: name, result }, 0);
    this.reconcileTime.zero({ controller: name });
    this.queueDuration.zero({ name });
    this.workDuration.zero({ name });
    const running = new Set<{ readonly since: number }>();
    this.running.set(name, running);
    return {
      added: () => {
        this.adds.inc({ name });
      },
      depth: (keys) => {
        this.queueDepth.set({ name }, keys);
      },
      started: (waitedSeconds) => {
        this.queueDuration.observe({ name }, waitedSeconds);
        const work = { since: performance.now() };
        running.add(work);
        return {
          finished: (result, seconds) => {
            running.delete(work);
            this.finished(name, result, seconds);
          },
        };
      },
    };
  }

  private finished(name: string, result: ReconcileOutcome, seconds: number): void {
    this.workDuration.observe({ name }, seconds);
    this.reconciles.inc({ controller: name, result });
    this.reconcileTime.observe({ controller: name }, seconds);
    if (result !== 'error') return;
    this.reconcileErrors.inc({ controller: name });
    // A failed reconcile is retried with backoff, as client-go's AddRateLimited counts it.
    this.retries.inc({ name });
  }

  /** The in-progress gauges, computed when scraped (client-go updates them every 500 ms). */
  private refreshRunning(): void {
    const now = performance.now();
    for (const [name, running] of this.running) {
      const ages = [...running].map((work) => (now - work.since) / 1000);
      this.unfinishedWork.set({ name }, ages.reduce((sum, age) => sum + age, 0));
      this.longestRunning.set({ name }, Math.max(0, ...ages));
    }
  }
}
