import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../../src/backing/informer.js';
import { KubeApiError, type KubeClient } from '../../../src/backing/kube-client.js';
import { peerUrlAnnotation, replicaLeaseLabel, ReplicaMembership } from '../../../src/backing/replica-membership.js';
import type { ResourceEventHandler, SharedInformerFactory } from '../../../src/backing/shared-informers.js';

interface Lease extends KubeObject {
  metadata: { name: string; namespace: string; resourceVersion: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { holderIdentity: string; leaseDurationSeconds: number; renewTime?: string };
}

/** The Leases' shared cache, fed by the test. */
class FakeLeases {
  handler: ResourceEventHandler<Lease> | undefined;
  readonly objects = new Map<string, Lease>();
  synced = true;

  addEventHandler(handler: ResourceEventHandler<Lease>): () => void {
    this.handler = handler;
    return () => (this.handler = undefined);
  }
  hasSynced(): boolean {
    return this.synced;
  }
  get(_namespace: string, name: string): Lease | undefined {
    return this.objects.get(name);
  }
  put(lease: Lease): void {
    const old = this.objects.get(lease.metadata.name);
    this.objects.set(lease.metadata.name, lease);
    if (old === undefined) this.handler?.onAdd?.(lease, false);
    else this.handler?.onUpdate?.(old, lease);
  }
  remove(name: string): void {
    const old = this.objects.get(name);
    this.objects.delete(name);
    if (old !== undefined) this.handler?.onDelete?.(old);
  }
}

/** kube-apiserver for the membership's own calls. */
class FakeKube {
  readonly calls: { method: string; path: string; body: unknown }[] = [];
  failRenewals = false;
  /** Answer the next renewal 409, as when a renewal that timed out was applied after all. */
  conflictOnce = false;
  /** Answer the next renewal 404, as when someone deleted the Lease. */
  goneOnce = false;
  stored: Lease | undefined;

  get(path: string): Promise<Lease | undefined> {
    this.calls.push({ method: 'GET', path, body: undefined });
    return Promise.resolve(this.stored);
  }

  create(path: string, body: Lease): Promise<Lease> {
    this.calls.push({ method: 'POST', path, body });
    return Promise.resolve({ ...body, metadata: { ...body.metadata, resourceVersion: '1', uid: 'own-uid' } });
  }
  request(method: string, path: string, options: { body?: Lease }): Promise<unknown> {
    this.calls.push({ method, path, body: options.body });
    if (method === 'PUT' && this.failRenewals) return Promise.reject(new KubeApiError(503, { message: 'unavailable' }));
    if (method === 'PUT' && this.goneOnce) {
      this.goneOnce = false;
      return Promise.reject(new KubeApiError(404, { message: 'not found', reason: 'NotFound' }));
    }
    if (method === 'PUT' && this.conflictOnce) {
      this.conflictOnce = false;
      return Promise.reject(new KubeApiError(409, { message: 'the object has been modified' }));
    }
    return Promise.resolve(options.body);
  }
}

const url = 'https://10.0.0.1:8443';

function peerLease(name: string, resourceVersion: string, options: { url?: string; identity?: string; durationSeconds?: number } = {}): Lease {
  return {
    metadata: {
      name,
      namespace: 'hostclaim-system',
      resourceVersion,
      uid: `${name}-uid`,
      labels: { [replicaLeaseLabel]: '' },
      annotations: { [peerUrlAnnotation]: options.url ?? `https://10.0.0.9:8443` },
    },
    spec: { holderIdentity: options.identity ?? `${name}-identity`, leaseDurationSeconds: options.durationSeconds ?? 30 },
  };
}

async function started(): Promise<{ membership: ReplicaMembership; leases: FakeLeases; kube: FakeKube; departures: () => number }> {
  const leases = new FakeLeases();
  const kube = new FakeKube();
  const factory = { informerFor: () => leases } as unknown as SharedInformerFactory;
  const membership = new ReplicaMembership(kube as unknown as KubeClient, factory, { namespace: 'hostclaim-system', url, leaseDurationSeconds: 30 });
  let departed = 0;
  membership.onDeparture(() => departed++);
  membership.start();
  await vi.advanceTimersByTimeAsync(0);
  return { membership, leases, kube, departures: () => departed };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('ReplicaMembership', () => {
  it('creates its own labelled Lease naming its URL and identity, and renews it every sixth of its duration', async () => {
    const { membership, kube } = await started();
    expect(membership.hasSynced()).toBe(true);
    const [created] = kube.calls;
    expect(created?.method).toBe('POST');
    expect(created?.path).toBe('/apis/coordination.k8s.io/v1/namespaces/hostclaim-system/leases');
    expect(created?.body).toMatchObject({
      metadata: { name: membership.leaseName, labels: { [replicaLeaseLabel]: '' }, annotations: { [peerUrlAnnotation]: url } },
      spec: { holderIdentity: membership.identity, leaseDurationSeconds: 30 },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(kube.calls.map((call) => `${call.method} ${call.path.split('/').at(-1) ?? ''}`)).toEqual(['POST leases', `PUT ${membership.leaseName}`]);
    expect(membership.ownLeaseValid()).toBe(true);
  });

  it('may acknowledge writes only while its last renewal is less than half a duration old', async () => {
    const { membership, kube } = await started();
    kube.failRenewals = true;
    await vi.advanceTimersByTimeAsync(14_000);
    expect(membership.ownLeaseValid()).toBe(true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(membership.ownLeaseValid()).toBe(false);
    // Failed renewals are retried every second, so writes resume within one once kube-apiserver answers.
    kube.failRenewals = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(membership.ownLeaseValid()).toBe(true);
  });

  it('renews again from the stored Lease when a renewal conflicts (an earlier one, timed out here, was applied after all)', async () => {
    const { membership, kube } = await started();
    kube.conflictOnce = true;
    kube.stored = { metadata: { name: membership.leaseName, namespace: 'hostclaim-system', resourceVersion: '7' }, spec: { holderIdentity: membership.identity, leaseDurationSeconds: 30 } };
    await vi.advanceTimersByTimeAsync(5_000);
    expect(kube.calls.slice(1).map((call) => `${call.method} ${(call.body as Lease | undefined)?.metadata.resourceVersion ?? '-'}`)).toEqual(['PUT 1', 'GET -', 'PUT 7']);
    expect(membership.ownLeaseValid()).toBe(true);
  });

  it('acknowledges nothing once its Lease is found deleted, creates it again and counts the new incarnation', async () => {
    const { membership, kube } = await started();
    expect(membership.leaseIncarnation()).toBe(1);
    kube.goneOnce = true;
    await vi.advanceTimersByTimeAsync(5_000);
    expect([membership.ownLeaseValid(), membership.hasSynced(), membership.leaseIncarnation()]).toEqual([false, false, 1]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect([membership.ownLeaseValid(), membership.hasSynced(), membership.leaseIncarnation()]).toEqual([true, true, 2]);
    expect(kube.calls.map((call) => call.method)).toEqual(['POST', 'PUT', 'POST']);
  });

  it('sees a peer live from its Lease until not renewed for its duration on this clock, then reports it departed once', async () => {
    const { membership, leases, departures } = await started();
    leases.put(peerLease('peer-a', '10', { identity: 'a' }));
    leases.put({ metadata: { name: 'hostclaim-binder', namespace: 'hostclaim-system', resourceVersion: '11' }, spec: { holderIdentity: 'x', leaseDurationSeconds: 10 } });
    expect(membership.peers()).toEqual([{ identity: 'a', url: 'https://10.0.0.9:8443' }]);
    expect([membership.knows('a'), membership.knows('x')]).toEqual([true, false]);
    await vi.advanceTimersByTimeAsync(25_000);
    leases.put(peerLease('peer-a', '12', { identity: 'a' }));
    await vi.advanceTimersByTimeAsync(25_000);
    expect([membership.peers().length, departures()]).toEqual([1, 0]);
    await vi.advanceTimersByTimeAsync(6_000);
    expect([membership.peers(), departures()]).toEqual([[], 1]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(departures()).toBe(1);
    // Renewed after all: live again, and its deletion is a departure.
    leases.put(peerLease('peer-a', '13', { identity: 'a' }));
    expect(membership.knows('a')).toBe(true);
    leases.remove('peer-a');
    expect([membership.peers(), departures()]).toEqual([[], 2]);
  });

  it('deletes a Lease naming its own URL (a predecessor on this address) instead of counting it a peer', async () => {
    const { membership, leases, kube } = await started();
    leases.put(peerLease('predecessor', '20', { url }));
    await vi.advanceTimersByTimeAsync(0);
    expect(membership.peers()).toEqual([]);
    expect(kube.calls.filter((call) => call.method === 'DELETE')).toEqual([
      {
        method: 'DELETE',
        path: '/apis/coordination.k8s.io/v1/namespaces/hostclaim-system/leases/predecessor',
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'predecessor-uid', resourceVersion: '20' } },
      },
    ]);
  });

  it('deletes a peer’s Lease expired for four durations, and its own on stop', async () => {
    const { membership, leases, kube } = await started();
    leases.put(peerLease('crashed', '30'));
    await vi.advanceTimersByTimeAsync(125_000);
    expect(kube.calls.filter((call) => call.method === 'DELETE').map((call) => call.path.split('/').at(-1))).toEqual(['crashed']);
    await membership.stop();
    expect(kube.calls.filter((call) => call.method === 'DELETE').map((call) => call.path.split('/').at(-1))).toEqual(['crashed', membership.leaseName]);
  });
});
