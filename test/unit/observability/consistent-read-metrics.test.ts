import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConsistentReadMetrics, groupResourceOf } from '../../../src/observability/consistent-read-metrics.js';

async function series(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('consistent-read metrics', () => {
  it("names a backing resource as kube's GroupResource does, from its collection path", () => {
    expect(groupResourceOf('/apis/infra.tenancy.metal3.io/v1alpha1/namespaces/hostclaim-system/hostclaimrecords')).toBe('hostclaimrecords.infra.tenancy.metal3.io');
    expect(groupResourceOf('/apis/metal3.io/v1alpha1/baremetalhosts')).toBe('baremetalhosts.metal3.io');
    expect(groupResourceOf('/api/v1/namespaces')).toBe('namespaces');
    expect(groupResourceOf('/api/v1/namespaces/a/secrets')).toBe('secrets');
  });

  it("exports every series of a resource at 0 from its first fence, then counts that resource's probes and results only", async () => {
    const registry = new Registry();
    const metrics = new ConsistentReadMetrics(registry);
    const hosts = metrics.forResource('/apis/metal3.io/v1alpha1/baremetalhosts');
    expect(await series(registry)).toEqual([
      'hostclaim_apiserver_consistent_read_probes_total{resource="baremetalhosts.metal3.io"} 0',
      'hostclaim_apiserver_consistent_read_fences_total{resource="baremetalhosts.metal3.io",result="fresh"} 0',
      'hostclaim_apiserver_consistent_read_fences_total{resource="baremetalhosts.metal3.io",result="unhealthy"} 0',
      'hostclaim_apiserver_consistent_read_fences_total{resource="baremetalhosts.metal3.io",result="timeout"} 0',
      'hostclaim_apiserver_consistent_read_fences_total{resource="baremetalhosts.metal3.io",result="error"} 0',
    ]);
    const namespaces = metrics.forResource('/api/v1/namespaces');
    hosts.probeSent();
    hosts.fenced('fresh');
    hosts.fenced('fresh');
    namespaces.fenced('timeout');
    const lines = await series(registry);
    expect(lines).toContain('hostclaim_apiserver_consistent_read_probes_total{resource="baremetalhosts.metal3.io"} 1');
    expect(lines).toContain('hostclaim_apiserver_consistent_read_fences_total{resource="baremetalhosts.metal3.io",result="fresh"} 2');
    expect(lines).toContain('hostclaim_apiserver_consistent_read_probes_total{resource="namespaces"} 0');
    expect(lines).toContain('hostclaim_apiserver_consistent_read_fences_total{resource="namespaces",result="timeout"} 1');
    expect(lines).toContain('hostclaim_apiserver_consistent_read_fences_total{resource="baremetalhosts.metal3.io",result="timeout"} 0');
  });
});
