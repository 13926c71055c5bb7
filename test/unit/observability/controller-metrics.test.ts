import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
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
    queue.reconciled('success', 0.5);
    queue.reconciled('error', 0.25);
    queue.reconciled('requeue_after', 0.25);
    let now = await samples(registry);
    expect(now['leader_election_master_status{name="binder"}']).toBe(1);
    expect(now['workqueue_adds_total{name="binder"}']).toBe(2);
    expect(now['workqueue_depth{name="binder"}']).toBe(2);
    expect(now['workqueue_retries_total{name="binder"}']).toBe(1);
    expect(now['controller_runtime_reconcile_errors_total{controller="binder"}']).toBe(1);
    expect(now['controller_runtime_reconcile_total{controller="binder",result="success"}']).toBe(1);
    expect(now['controller_runtime_reconcile_time_seconds_sum{controller="binder"}']).toBe(1);
    expect(now['controller_runtime_reconcile_time_seconds_count{controller="binder"}']).toBe(3);
    leadership.leading(false);
    now = await samples(registry);
    expect(now['leader_election_master_status{name="binder"}']).toBe(0);
  });
});
