import { describe, expect, it, vi } from 'vitest';
import type { CollectionVersions } from '../../../src/backing/metadata-protobuf.js';
import { agrees, BatchCoalescer, ConsistentReadFence, type FencedCache, type ProbeScope } from '../../../src/backing/consistent-read.js';
import type { KubeObject } from '../../../src/backing/informer.js';
import type { Representation } from '../../../src/backing/kube-client.js';
import type { FenceObserver } from '../../../src/observability/consistent-read-metrics.js';

function object(name: string, resourceVersion: string): KubeObject {
  return { metadata: { namespace: 'ns', name, resourceVersion } };
}

/** A cache the test moves by hand. */
class FakeCache implements FencedCache {
  readonly resource = { path: '/apis/example.io/v1/things' };
  readonly objects = new Map<string, KubeObject>();
  resourceVersion = '0';
  healthy = true;
  private readonly listeners = new Set<() => void>();

  isHealthy(): boolean {
    return this.healthy;
  }

  lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  get(_namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(name);
  }

  addChangeListener(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An event: the object (or its deletion) at resourceVersion. */
  apply(name: string, resourceVersion: string, deleted = false): void {
    if (deleted) this.objects.delete(name);
    else this.objects.set(name, object(name, resourceVersion));
    this.resourceVersion = resourceVersion;
    for (const listener of [...this.listeners]) listener();
  }

  listenerCount(): number {
    return this.listeners.size;
  }
}

const everything = (cache: FakeCache): ProbeScope => ({ key: 'all', cached: () => cache.objects.values() });

/** A kube client whose metadata LISTs are answered by the test, one by one. */
class ProbeClient {
  readonly requests: { path: string; query: unknown; representation: Representation; answer: (items: KubeObject[], rv: string) => void; fail: (error: Error) => void }[] = [];

  list<T>(path: string, query: unknown, representation: Representation): Promise<T> {
    return new Promise((resolve, reject) => {
      this.requests.push({ path, query, representation, answer: (items, rv) => { resolve({ metadata: { resourceVersion: rv }, items } as T); }, fail: reject });
    });
  }

  listVersions(path: string, query: unknown): Promise<CollectionVersions> {
    return new Promise((resolve, reject) => {
      this.requests.push({
        path,
        query,
        representation: 'metadata',
        answer: (items, rv) => {
          resolve({ resourceVersion: rv, items: items.map(({ metadata }) => ({ namespace: metadata.namespace ?? '', name: metadata.name ?? '', resourceVersion: metadata.resourceVersion ?? '' })) });
        },
        fail: reject,
      });
    });
  }
}

/** An observer that writes down what a fence reports. */
function recordingObserver(): FenceObserver & { readonly reports: string[] } {
  const reports: string[] = [];
  return {
    reports,
    probeSent: () => {
      reports.push('probe');
    },
    fenced: (result) => {
      reports.push(result);
    },
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('agreement rule', () => {
  const probe = (items: [string, bigint][], rv: bigint) => ({ resourceVersion: rv, items: new Map(items.map(([k, v]) => [`ns/${k}`, v])) });

  it('agrees when the cache holds exactly the probed versions, though it is behind the cluster revision', () => {
    const cache = new FakeCache();
    cache.apply('a', '5');
    cache.apply('b', '6');
    expect(agrees(cache, everything(cache), probe([['a', 5n], ['b', 6n]], 100n))).toBe(true);
  });

  it('disagrees while a probed object is missing or older in the cache', () => {
    const cache = new FakeCache();
    cache.apply('a', '5');
    expect(agrees(cache, everything(cache), probe([['a', 7n]], 100n))).toBe(false);
    expect(agrees(cache, everything(cache), probe([['a', 5n], ['b', 6n]], 100n))).toBe(false);
  });

  it('disagrees while the cache holds an object the probe did not see, unless it is newer than the probe', () => {
    const cache = new FakeCache();
    cache.apply('a', '5');
    cache.apply('b', '6');
    expect(agrees(cache, everything(cache), probe([['a', 5n]], 100n))).toBe(false);
    const newer = { key: 'all', cached: () => [object('a', '5'), object('c', '101')] };
    expect(agrees(cache, newer, probe([['a', 5n]], 100n))).toBe(true);
  });

  it('agrees whenever the cache has reached the probe revision', () => {
    const cache = new FakeCache();
    cache.apply('a', '100');
    expect(agrees(cache, everything(cache), probe([['b', 50n]], 100n))).toBe(true);
  });
});

describe('ConsistentReadFence', () => {
  it('probes metadata only, with the scope selectors, and answers max(probe, cache) resourceVersion once agreed', async () => {
    const cache = new FakeCache();
    cache.apply('a', '5');
    const client = new ProbeClient();
    const fence = new ConsistentReadFence(client, cache);
    const read = fence.fence({ key: 'one', fieldSelector: 'metadata.name=a', cached: () => [...cache.objects.values()].filter((o) => o.metadata.name === 'a') });
    await settle();
    expect(client.requests.map((r) => [r.path, r.query, r.representation])).toEqual([
      ['/apis/example.io/v1/things', { labelSelector: undefined, fieldSelector: 'metadata.name=a' }, 'metadata'],
    ]);
    client.requests[0]?.answer([object('a', '5')], '100');
    expect(await read).toEqual({ fresh: true, resourceVersion: '100' });
  });

  it('waits for the event of a write the probe saw, then answers at the newer resourceVersion', async () => {
    const cache = new FakeCache();
    cache.apply('a', '5');
    const client = new ProbeClient();
    const fence = new ConsistentReadFence(client, cache);
    let outcome: unknown;
    void fence.fence(everything(cache)).then((o) => (outcome = o));
    await settle();
    client.requests[0]?.answer([object('a', '90')], '100');
    await settle();
    expect(outcome).toBeUndefined();
    cache.apply('other', '95');
    expect(outcome).toBeUndefined();
    cache.apply('a', '90');
    await settle();
    // The cache holds 'other' (95, older than the probe and not in it): still not agreed.
    expect(outcome).toBeUndefined();
    cache.apply('other', '120', true);
    await settle();
    expect(outcome).toEqual({ fresh: true, resourceVersion: '120' });
    expect(cache.listenerCount()).toBe(0);
  });

  it('gives up after waitMs and when the cache turns unhealthy, so the caller reads from kube-apiserver', async () => {
    const cache = new FakeCache();
    const client = new ProbeClient();
    const fence = new ConsistentReadFence(client, cache, { waitMs: 20 });
    const timedOut = fence.fence(everything(cache));
    await settle();
    client.requests[0]?.answer([object('a', '9')], '10');
    expect(await timedOut).toEqual({ fresh: false, reason: 'timeout' });

    const broken = new ConsistentReadFence(client, cache, { waitMs: 60_000 }).fence(everything(cache));
    await settle();
    client.requests[1]?.answer([object('a', '9')], '10');
    await settle();
    cache.healthy = false;
    cache.apply('b', '9');
    expect(await broken).toEqual({ fresh: false, reason: 'unhealthy' });
    expect(await fence.fence(everything(cache))).toEqual({ fresh: false, reason: 'unhealthy' });
    expect(client.requests).toHaveLength(2);
    expect(cache.listenerCount()).toBe(0);
  });

  it('fails a request as timed out when its probe does not come within one call bound, though the probe in flight held it up', async () => {
    vi.useFakeTimers();
    try {
      const cache = new FakeCache();
      const client = new ProbeClient();
      const fence = new ConsistentReadFence(client, cache, { probeWaitMs: 30_000 });
      const first = fence.fence(everything(cache)).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await vi.advanceTimersByTimeAsync(20_000);
      // Arrives while the first probe hangs: it waits for it, then for its own.
      const second = fence.fence(everything(cache)).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await first).toMatchObject({ name: 'KubeUnavailableError', timedOut: true });
      expect(client.requests).toHaveLength(1);
      // The first probe still hangs: the second request is failed 30 s after it arrived, not after two probes.
      await vi.advanceTimersByTimeAsync(19_999);
      let settled = false;
      void second.then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await second).toMatchObject({ name: 'KubeUnavailableError', timedOut: true });
    } finally {
      vi.useRealTimers();
    }
  });

  it('shares probes per scope, never with a probe that started before the request arrived', async () => {
    const cache = new FakeCache();
    const client = new ProbeClient();
    const fence = new ConsistentReadFence(client, cache);
    const outcomes: string[] = [];
    const read = (label: string, scope: ProbeScope): void => {
      void fence.fence(scope).then((o) => outcomes.push(`${label} ${o.fresh ? o.resourceVersion : o.reason}`));
    };
    const scopeA = everything(cache);
    const scopeB: ProbeScope = { key: 'b', labelSelector: 'x=y', cached: () => [] };
    read('r1', scopeA);
    await settle();
    read('r2', scopeA);
    read('r3', scopeA);
    read('other scope', scopeB);
    await settle();
    // One probe for r1 and one for the other scope; r2 and r3 wait for the next probe of their scope.
    expect(client.requests.map((r) => r.query)).toEqual([{ labelSelector: undefined, fieldSelector: undefined }, { labelSelector: 'x=y', fieldSelector: undefined }]);
    client.requests[0]?.answer([], '10');
    await settle();
    expect(outcomes).toEqual(['r1 10']);
    expect(client.requests).toHaveLength(3);
    read('r4', scopeA);
    await settle();
    client.requests[2]?.answer([], '11');
    await settle();
    expect(outcomes).toEqual(['r1 10', 'r2 11', 'r3 11']);
    // r4 arrived while the second probe was in flight: it gets a third.
    expect(client.requests).toHaveLength(4);
    client.requests[3]?.answer([], '12');
    client.requests[1]?.answer([], '13');
    await settle();
    expect(outcomes.slice(3).sort()).toEqual(['other scope 13', 'r4 12']);
    expect(fence.probesSent()).toBe(4);
  });

  it('reports each probe it sends and how each fence ended, not a fence whose client went away', async () => {
    const cache = new FakeCache();
    const client = new ProbeClient();
    const observer = recordingObserver();
    const fence = new ConsistentReadFence(client, cache, { waitMs: 20, observer });
    const tally = (): Record<string, number> => {
      const counts: Record<string, number> = {};
      for (const report of observer.reports) counts[report] = (counts[report] ?? 0) + 1;
      return counts;
    };
    // r1 gets the first probe; r2 and r3, arriving while it is in flight, share the second.
    const reads = [fence.fence(everything(cache))];
    await settle();
    reads.push(fence.fence(everything(cache)), fence.fence(everything(cache)));
    client.requests[0]?.answer([], '10');
    await settle();
    client.requests[1]?.answer([], '11');
    await Promise.all(reads);
    expect(tally()).toEqual({ probe: 2, fresh: 3 });

    observer.reports.length = 0;
    const lagging = fence.fence(everything(cache));
    await settle();
    client.requests[2]?.answer([object('a', '9')], '10');
    expect(await lagging).toEqual({ fresh: false, reason: 'timeout' });
    const failing = fence.fence(everything(cache)).catch((error: unknown) => error);
    await settle();
    client.requests[3]?.fail(new Error('connection refused'));
    expect(await failing).toEqual(new Error('connection refused'));
    const clientGone = new AbortController();
    const abandoned = fence.fence(everything(cache), clientGone.signal).catch((error: unknown) => error);
    await settle();
    client.requests[4]?.answer([object('a', '9')], '10');
    await settle();
    clientGone.abort(new Error('client went away'));
    expect(await abandoned).toEqual(new Error('client went away'));
    cache.healthy = false;
    await fence.fence(everything(cache));
    expect(observer.reports).toEqual(['probe', 'timeout', 'probe', 'error', 'probe', 'unhealthy']);
  });
});

describe('BatchCoalescer', () => {
  /** Calls the test ends by hand, each recording the members it covers. */
  function calls() {
    const made: { readonly members: readonly string[]; readonly end: (value: string) => void; readonly fail: (error: Error) => void }[] = [];
    const call = (members: readonly string[]): Promise<string> =>
      new Promise((resolve, reject) => {
        made.push({ members, end: resolve, fail: reject });
      });
    return { made, call };
  }

  it('covers every member asked for while a call was in flight with the next call, never with the one in flight', async () => {
    const coalescer = new BatchCoalescer<string>();
    const { made, call } = calls();
    const a = coalescer.run('ns', 'a', 10, call);
    const b = coalescer.run('ns', 'b', 10, call);
    const c = coalescer.run('ns', 'c', 10, call);
    const aAgain = coalescer.run('ns', 'a', 10, call);
    expect(made.map((m) => m.members)).toEqual([['a']]);
    made[0]?.end('first');
    expect(await a).toBe('first');
    await Promise.resolve();
    expect(made.map((m) => m.members)).toEqual([['a'], ['b', 'c', 'a']]);
    made[1]?.end('second');
    expect(await Promise.all([b, c, aAgain])).toEqual(['second', 'second', 'second']);
    expect(coalescer.started).toBe(2);
  });

  it('covers at most maxMembers per call, the others with the calls after', async () => {
    const coalescer = new BatchCoalescer<string>();
    const { made, call } = calls();
    const first = coalescer.run('ns', 'x', 2, call);
    const rest = ['a', 'b', 'c'].map((member) => coalescer.run('ns', member, 2, call));
    made[0]?.end('0');
    await first;
    await Promise.resolve();
    made[1]?.end('1');
    await Promise.all(rest.slice(0, 2));
    await Promise.resolve();
    made[2]?.end('2');
    expect(await Promise.all(rest)).toEqual(['1', '1', '2']);
    expect(made.map((m) => m.members)).toEqual([['x'], ['a', 'b'], ['c']]);
  });

  it('fails the members of a failed call only; the next call goes ahead', async () => {
    const coalescer = new BatchCoalescer<string>();
    const { made, call } = calls();
    const a = coalescer.run('ns', 'a', 10, call);
    const b = coalescer.run('ns', 'b', 10, call);
    made[0]?.fail(new Error('kube-apiserver unavailable'));
    await expect(a).rejects.toThrow('kube-apiserver unavailable');
    await Promise.resolve();
    made[1]?.end('ok');
    expect(await b).toBe('ok');
  });

  it('keeps separate batches per key', () => {
    const coalescer = new BatchCoalescer<string>();
    const { made, call } = calls();
    void coalescer.run('records', 'a', 10, call);
    void coalescer.run('hosts', 'a', 10, call);
    expect(made).toHaveLength(2);
  });
});

describe('ConsistentReadFence.fenceAt (a target from the replicas’ watermarks)', () => {
  it('is fresh at once when the cache has reached the target, at the cache’s resourceVersion, without a probe', async () => {
    const cache = new FakeCache();
    cache.apply('a', '40');
    const client = new ProbeClient();
    const observer = recordingObserver();
    const fence = new ConsistentReadFence(client, cache, { observer });
    expect(await fence.fenceAt(40n)).toEqual({ fresh: true, resourceVersion: '40' });
    expect([client.requests.length, observer.reports]).toEqual([0, ['fresh']]);
  });

  it('waits for the event that brings the cache to the target, and no longer', async () => {
    const cache = new FakeCache();
    cache.apply('a', '40');
    const fence = new ConsistentReadFence(new ProbeClient(), cache);
    let outcome: unknown;
    const fenced = fence.fenceAt(42n).then((freshness) => (outcome = freshness));
    cache.apply('b', '41');
    await settle();
    expect(outcome).toBeUndefined();
    cache.apply('c', '43');
    await fenced;
    expect([outcome, cache.listenerCount()]).toEqual([{ fresh: true, resourceVersion: '43' }, 0]);
  });

  it('gives up after waitMs, and at once on an unhealthy cache, so the caller reads from kube-apiserver', async () => {
    const cache = new FakeCache();
    const observer = recordingObserver();
    const fence = new ConsistentReadFence(new ProbeClient(), cache, { waitMs: 20, observer });
    expect(await fence.fenceAt(5n)).toEqual({ fresh: false, reason: 'timeout' });
    cache.healthy = false;
    expect(await fence.fenceAt(5n)).toEqual({ fresh: false, reason: 'unhealthy' });
    expect(observer.reports).toEqual(['timeout', 'unhealthy']);
  });
});
