import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { ControllerMetrics } from '../../../src/observability/controller-metrics.js';

async function samples(registry: Registry): Promise<Record<string, number>> {
  const text = await registry.metrics();
  const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#') && !line.includes('_bucket{'));
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))]));
}

describe('ControllerMetrics', () => {
  it('exports every series of a controller at 0 from the start, as controller-runtime does', async () => {
    const registry = new Registry();
    const metrics = new ControllerMetrics(registry);
    metrics.leaderElection('binder');
    metrics.workQueue('binder');
    expect(await samples(registry)).toEqual({
      'leader_election_master_status{name="binder"}': 0,
      'workqueue_adds_total{name="binder"}': 0,
      'workqueue_depth{name="binder"}': 0,
      'workqueue_retries_total{name="binder"}': 0,
      'controller_runtime_reconcile_total{controller="binder",result="success"}': 0,
      'controller_runtime_reconcile_total{controller="binder",result="error"}': 0,
      'controller_runtime_reconcile_total{controller="binder",result="requeue_after"}': 0,
      'controller_runtime_reconcile_errors_total{controller="binder"}': 0,
      'controller_runtime_reconcile_time_seconds_sum{controller="binder"}': 0,
      'controller_runtime_reconcile_time_seconds_count{controller="binder"}': 0,
      'workqueue_queue_duration_seconds_sum{name="binder"}': 0,
      'workqueue_queue_duration_seconds_count{name="binder"}': 0,
      'workqueue_work_duration_seconds_sum{name="binder"}': 0,
      'workqueue_work_duration_seconds_count{name="binder"}': 0,
      'workqueue_unfinished_work_seconds{name="binder"}': 0,
      'workqueue_longest_running_processor_seconds{name="binder"}': 0,
    });
  });

  it('follows leadership, and counts adds, depth, outcomes, errors as retries, and reconcile time', async () => {
    const registry = new Registry();
    const metrics = new ControllerMetrics(registry);
    const leadership = metrics.leaderElection('binder');
    const queue = metrics.workQueue('binder');
    leadership.leading(true);
    queue.added();
    queue.added();
    queue.depth(2);
    queue.started(0.125).finished('success', 0.5);
    queue.started(0.125).finished('error', 0.25);
    queue.started(0.25).finished('requeue_after', 0.25);
    let now = await samples(registry);
    expect(now['leader_election_master_status{name="binder"}']).toBe(1);
    expect(now['workqueue_adds_total{name="binder"}']).toBe(2);
    expect(now['workqueue_depth{name="binder"}']).toBe(2);
    expect(now['workqueue_retries_total{name="binder"}']).toBe(1);
    expect(now['controller_runtime_reconcile_errors_total{controller="binder"}']).toBe(1);
    expect(now['controller_runtime_reconcile_total{controller="binder",result="success"}']).toBe(1);
    expect(now['controller_runtime_reconcile_time_seconds_sum{controller="binder"}']).toBe(1);
    expect(now['controller_runtime_reconcile_time_seconds_count{controller="binder"}']).toBe(3);
    expect([now['workqueue_queue_duration_seconds_sum{name="binder"}'], now['workqueue_queue_duration_seconds_count{name="binder"}']]).toEqual([0.5, 3]);
    expect([now['workqueue_work_duration_seconds_sum{name="binder"}'], now['workqueue_work_duration_seconds_count{name="binder"}']]).toEqual([1, 3]);
    leadership.leading(false);
    now = await samples(registry);
    expect(now['leader_election_master_status{name="binder"}']).toBe(0);
  });

  it('shows the work in progress when scraped: its total age and its oldest, gone once it ends', async () => {
    vi.useFakeTimers();
    try {
      const registry = new Registry();
      const queue = new ControllerMetrics(registry).workQueue('binder');
      const first = queue.started(0);
      vi.advanceTimersByTime(3000);
      const second = queue.started(0);
      vi.advanceTimersByTime(1000);
      let now = await samples(registry);
      expect([now['workqueue_unfinished_work_seconds{name="binder"}'], now['workqueue_longest_running_processor_seconds{name="binder"}']]).toEqual([5, 4]);
      first.finished('success', 4);
      now = await samples(registry);
      expect([now['workqueue_unfinished_work_seconds{name="binder"}'], now['workqueue_longest_running_processor_seconds{name="binder"}']]).toEqual([1, 1]);
      second.finished('success', 1);
      now = await samples(registry);
      expect([now['workqueue_unfinished_work_seconds{name="binder"}'], now['workqueue_longest_running_processor_seconds{name="binder"}']]).toEqual([0, 0]);
    } finally {
      vi.useRealTimers();
    }
  });
});
