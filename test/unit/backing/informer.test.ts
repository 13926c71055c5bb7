import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Informer, listPageSize, type KubeObject, type ListWatchClient } from '../../../src/backing/informer.js';
import { KubeApiError, type Representation, type WatchEvent } from '../../../src/backing/kube-client.js';

interface Call {
  readonly verb: 'list' | 'watch';
  readonly at: number;
  readonly representation: Representation | undefined;
  readonly resourceVersion?: string | undefined;
}

/** A kube client whose list answers one object at revision 10 and whose watches each last `watchMs` and deliver `events`. */
class FakeClient implements ListWatchClient {
  readonly calls: Call[] = [];

  constructor(
    private readonly watchMs: number,
    private readonly events: (call: number) => WatchEvent<KubeObject>[] = () => [],
  ) {}

  list<T>(_path: string, _query: unknown, representation: Representation): Promise<T> {
    this.calls.push({ verb: 'list', at: Date.now(), representation });
    return Promise.resolve({ metadata: { resourceVersion: '10' }, items: [{ metadata: { namespace: 'ns', name: 'a', resourceVersion: '10' } }] } as T);
  }

  async watch<T>(
    _path: string,
    query: Readonly<Record<string, string | undefined>>,
    onEvent: (event: WatchEvent<T>) => void,
    options: { readonly representation?: Representation } = {},
  ): Promise<void> {
    const call = this.calls.filter((c) => c.verb === 'watch').length;
    this.calls.push({ verb: 'watch', at: Date.now(), representation: options.representation, resourceVersion: query['resourceVersion'] });
    await new Promise((resolve) => setTimeout(resolve, this.watchMs));
    for (const event of this.events(call)) onEvent(event as WatchEvent<T>);
  }

  watches(): Call[] {
    return this.calls.filter((c) => c.verb === 'watch');
  }
}

describe('Informer', () => {
  let informer: Informer<KubeObject> | undefined;

  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });

  afterEach(() => {
    informer?.stop();
    vi.useRealTimers();
  });

  it('asks for metadata only on both its list and its watch when told to', async () => {
    const client = new FakeClient(60_000);
    informer = new Informer(client, { path: '/api/v1/secrets', representation: 'metadata' });
    informer.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(client.calls.map((c) => [c.verb, c.representation])).toEqual([
      ['list', 'metadata'],
      ['watch', 'metadata'],
    ]);
  });

  it('asks for whole objects by default', async () => {
    const client = new FakeClient(60_000);
    informer = new Informer(client, { path: '/api/v1/namespaces' });
    informer.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(client.calls.map((c) => [c.verb, c.representation])).toEqual([
      ['list', 'full'],
      ['watch', 'full'],
    ]);
  });

  it('backs off, as client-go does, when watches close at once without an event (a watch kube-apiserver cannot serve)', async () => {
    const client = new FakeClient(10);
    const errors: string[] = [];
    informer = new Informer(client, { path: '/api/v1/secrets' }, { onError: (error) => errors.push(String(error)) });
    informer.start();
    await vi.advanceTimersByTimeAsync(10_000);
    // Backoff 800 ms, then 1.6 s, 3.2 s, 6.4 s (each +0–20 % jitter): watches start at 0, ~0.9 s, ~2.6 s, ~6.2 s.
    const starts = client.watches().map((c) => c.at);
    expect(starts).toHaveLength(4);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(10 + 800);
    expect(starts[3]! - starts[2]!).toBeGreaterThanOrEqual(10 + 3200);
    expect(errors).toEqual(Array.from({ length: 4 }, () => 'Error: very short watch on /api/v1/secrets: closed after 10 ms without an event'));
    // Still resuming from the list's revision: a short watch is not a reason to relist.
    expect(client.calls.filter((c) => c.verb === 'list')).toHaveLength(1);
    expect(client.watches().map((c) => c.resourceVersion)).toEqual(['10', '10', '10', '10']);
  });

  it('re-watches at once from the last event after a short watch that delivered events', async () => {
    const modified = (rv: string): WatchEvent<KubeObject> => ({ type: 'MODIFIED', object: { metadata: { namespace: 'ns', name: 'a', resourceVersion: rv } } });
    const client = new FakeClient(10, (call) => [modified(String(11 + call))]);
    const errors: unknown[] = [];
    const delivered: string[] = [];
    informer = new Informer(
      client,
      { path: '/api/v1/secrets' },
      { onError: (error) => errors.push(error), onEvent: ({ object }) => delivered.push(object.metadata.resourceVersion ?? '') },
    );
    informer.start();
    await vi.advanceTimersByTimeAsync(35);
    expect(client.watches().map((c) => [c.at, c.resourceVersion])).toEqual([
      [0, '10'],
      [10, '11'],
      [20, '12'],
      [30, '13'],
    ]);
    expect(errors).toEqual([]);
    expect(delivered).toEqual(['11', '12', '13']);
  });

  it('ends a backoff wait when told kube-apiserver answers again (retryNow), and only then', async () => {
    const client = new FakeClient(10);
    informer = new Informer(client, { path: '/api/v1/secrets' });
    informer.start();
    // Four short watches: the informer now waits 6.4 s (+ up to 20 %) before the fifth.
    await vi.advanceTimersByTimeAsync(7000);
    expect(client.watches()).toHaveLength(4);
    const waitingSince = client.watches()[3]!.at + 10;
    await vi.advanceTimersByTimeAsync(1000);
    expect(client.watches()).toHaveLength(4);
    informer.retryNow();
    await vi.advanceTimersByTimeAsync(1);
    expect(client.watches()).toHaveLength(5);
    expect(client.watches()[4]!.at - waitingSince).toBeLessThan(6400);
    expect(client.watches()[4]!.resourceVersion).toBe('10');
  });

  it('watches without backoff after a watch that lasted long enough, even without events', async () => {
    const client = new FakeClient(1000);
    const errors: unknown[] = [];
    informer = new Informer(client, { path: '/api/v1/secrets' }, { onError: (error) => errors.push(error) });
    informer.start();
    await vi.advanceTimersByTimeAsync(2500);
    expect(client.watches().map((c) => c.at)).toEqual([0, 1000, 2000]);
    expect(errors).toEqual([]);
  });
});

/** A kube client listing `total` objects in pages as kube-apiserver does (limit, continue), whose watches never end. */
class PagingClient implements ListWatchClient {
  readonly lists: Readonly<Record<string, string | undefined>>[] = [];
  readonly watchedFrom: (string | undefined)[] = [];

  constructor(
    private readonly total: number,
    private readonly expireContinuation = false,
  ) {}

  list<T>(_path: string, query: Readonly<Record<string, string | undefined>>): Promise<T> {
    this.lists.push(query);
    const limit = query['limit'] === undefined ? this.total : Number(query['limit']);
    const from = query['continue'] === undefined ? 0 : Number(query['continue']);
    if (from > 0 && this.expireContinuation) {
      return Promise.reject(new KubeApiError(410, { kind: 'Status', code: 410, reason: 'Expired', message: 'The provided continue parameter is too old' }));
    }
    const to = Math.min(from + limit, this.total);
    const items = Array.from({ length: to - from }, (_, i) => ({ metadata: { namespace: 'ns', name: `o${from + i}`, resourceVersion: String(from + i + 1) } }));
    // Every page tells the first page's snapshot, as kube's continuations do.
    return Promise.resolve({ metadata: { resourceVersion: '7000', ...(to < this.total ? { continue: String(to) } : {}) }, items } as T);
  }

  async watch(_path: string, query: Readonly<Record<string, string | undefined>>): Promise<void> {
    this.watchedFrom.push(query['resourceVersion']);
    await new Promise(() => undefined);
  }
}

describe('Informer lists in pages', () => {
  let informer: Informer<KubeObject> | undefined;

  afterEach(() => {
    informer?.stop();
  });

  async function listed(client: PagingClient): Promise<{ readonly names: string[]; readonly resourceVersion: string }> {
    return new Promise((resolve) => {
      informer = new Informer(client, { path: '/apis/metal3.io/v1alpha1/baremetalhosts', labelSelector: 'a=b' }, {
        onList: (objects, resourceVersion) => {
          resolve({ names: objects.map((o) => o.metadata.name ?? ''), resourceVersion });
        },
      });
      informer.start();
    });
  }

  it(`asks for ${listPageSize} at a time, follows the continue tokens, and reports every object at the first page's resourceVersion`, async () => {
    const client = new PagingClient(1_234);
    const { names, resourceVersion } = await listed(client);
    expect(names).toHaveLength(1_234);
    expect(new Set(names).size).toBe(1_234);
    expect(resourceVersion).toBe('7000');
    expect(client.lists).toEqual([
      { labelSelector: 'a=b', fieldSelector: undefined, limit: '500', continue: undefined },
      { labelSelector: 'a=b', fieldSelector: undefined, limit: '500', continue: '500' },
      { labelSelector: 'a=b', fieldSelector: undefined, limit: '500', continue: '1000' },
    ]);
    await vi.waitFor(() => {
      expect(client.watchedFrom).toEqual(['7000']);
    });
  });

  it('lists once without a limit when a continuation answers 410 (its snapshot was compacted), as client-go\'s pager does', async () => {
    const client = new PagingClient(800, true);
    const { names } = await listed(client);
    expect(names).toHaveLength(800);
    expect(client.lists.map((q) => [q['limit'], q['continue']])).toEqual([
      ['500', undefined],
      ['500', '500'],
      [undefined, undefined],
    ]);
  });
});
