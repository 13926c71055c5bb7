import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue, type ReconcileResult } from '../../../src/controllers/work-queue.js';

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: Error): void;
}

function deferred(): Deferred {
  let resolve = (): void => undefined;
  let reject = (_error: Error): void => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A reconcile function that records calls and lets each test decide what a call does. */
class Harness {
  readonly calls: { key: string; at: number }[] = [];
  readonly errors: { key: string; error: unknown }[] = [];
  readonly running = new Map<string, number>();
  maxConcurrentPerKey = 0;
  maxConcurrent = 0;
  private readonly gates = new Map<string, Deferred[]>();
  behaviour: (key: string, call: number) => Promise<ReconcileResult> = () => Promise.resolve(undefined);
  readonly queue: WorkQueue;

  constructor(options: ConstructorParameters<typeof WorkQueue>[1]) {
    this.queue = new WorkQueue(
      async (key) => {
        const call = this.calls.filter((c) => c.key === key).length;
        this.calls.push({ key, at: Date.now() });
        const count = (this.running.get(key) ?? 0) + 1;
        this.running.set(key, count);
        this.maxConcurrentPerKey = Math.max(this.maxConcurrentPerKey, count);
        this.maxConcurrent = Math.max(this.maxConcurrent, [...this.running.values()].reduce((a, b) => a + b, 0));
        try {
          return await this.behaviour(key, call);
        } finally {
          this.running.set(key, (this.running.get(key) ?? 1) - 1);
        }
      },
      options,
      (key, error) => {
        this.errors.push({ key, error });
      },
    );
    this.queue.start();
  }

  /** A gate the next call for `key` waits on (see `blockOn`). */
  gate(key: string): Deferred {
    const gate = deferred();
    const list = this.gates.get(key) ?? [];
    list.push(gate);
    this.gates.set(key, list);
    return gate;
  }

  async waitGate(key: string): Promise<void> {
    const gate = this.gates.get(key)?.shift();
    if (gate !== undefined) await gate.promise;
  }

  count(key: string): number {
    return this.calls.filter((c) => c.key === key).length;
  }
}

/** Lets pending promise callbacks (and zero-delay timers) run. */
async function settle(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('processes an added key', async () => {
    const h = new Harness({ workers: 1 });
    h.queue.add('a');
    await settle();
    expect(h.calls.map((c) => c.key)).toEqual(['a']);
    await h.queue.stop();
  });

  it('queues a key at most once however often it is added', async () => {
    const h = new Harness({ workers: 1 });
    const busy = h.gate('busy');
    h.behaviour = (key) => h.waitGate(key).then(() => undefined);
    h.queue.add('busy');
    h.queue.add('a');
    h.queue.add('a');
    h.queue.add('a');
    await settle();
    expect(h.calls.map((c) => c.key)).toEqual(['busy']);
    busy.resolve();
    await settle();
    expect(h.calls.map((c) => c.key)).toEqual(['busy', 'a']);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.count('a')).toBe(1);
    await h.queue.stop();
  });

  it('processes keys in the order they were added', async () => {
    const h = new Harness({ workers: 1 });
    const busy = h.gate('busy');
    h.behaviour = (key) => h.waitGate(key).then(() => undefined);
    h.queue.add('busy');
    for (const key of ['c', 'a', 'b', 'a']) h.queue.add(key);
    busy.resolve();
    await settle();
    expect(h.calls.map((c) => c.key)).toEqual(['busy', 'c', 'a', 'b']);
    await h.queue.stop();
  });

  it('never reconciles one key twice at the same time, and reruns it once after an add during processing', async () => {
    const h = new Harness({ workers: 4 });
    const first = h.gate('a');
    h.behaviour = (key) => h.waitGate(key).then(() => undefined);
    h.queue.add('a');
    await settle();
    for (let i = 0; i < 5; i++) h.queue.add('a');
    await settle();
    expect(h.count('a')).toBe(1);
    first.resolve();
    await settle();
    expect(h.count('a')).toBe(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.count('a')).toBe(2);
    expect(h.maxConcurrentPerKey).toBe(1);
    await h.queue.stop();
  });

  it('runs different keys in parallel, up to the number of workers', async () => {
    const h = new Harness({ workers: 2 });
    const gates = { a: h.gate('a'), b: h.gate('b'), c: h.gate('c') };
    h.behaviour = (key) => h.waitGate(key).then(() => undefined);
    h.queue.add('a');
    h.queue.add('b');
    h.queue.add('c');
    await settle();
    expect(h.calls.map((c) => c.key)).toEqual(['a', 'b']);
    gates.b.resolve();
    await settle();
    expect(h.calls.map((c) => c.key)).toEqual(['a', 'b', 'c']);
    gates.a.resolve();
    gates.c.resolve();
    await settle();
    expect(h.maxConcurrent).toBe(2);
    await h.queue.stop();
  });

  it('retries a failing key with exponential backoff, capped, and reports each error', async () => {
    const h = new Harness({ workers: 1, minRetryMs: 100, maxRetryMs: 400 });
    const failure = new Error('boom');
    h.behaviour = () => Promise.reject(failure);
    h.queue.add('a');
    await vi.advanceTimersByTimeAsync(1_500);
    expect(h.calls.map((c) => c.at)).toEqual([0, 100, 300, 700, 1100, 1500]);
    expect(h.errors.length).toBe(6);
    expect(h.errors[0]).toEqual({ key: 'a', error: failure });
    await h.queue.stop();
  });

  it('does not retry before the backoff and resets the backoff after a success', async () => {
    const h = new Harness({ workers: 1, minRetryMs: 100, maxRetryMs: 10_000 });
    // Fails twice, succeeds, then fails again.
    h.behaviour = (_key, call) => (call === 2 ? Promise.resolve(undefined) : Promise.reject(new Error(`call ${call}`)));
    h.queue.add('a');
    await vi.advanceTimersByTimeAsync(99);
    expect(h.count('a')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.count('a')).toBe(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(h.count('a')).toBe(3);
    // Success: no retry scheduled.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.count('a')).toBe(3);
    // A new failure starts again from the minimum delay.
    const at = Date.now();
    h.queue.add('a');
    await settle();
    expect(h.count('a')).toBe(4);
    await vi.advanceTimersByTimeAsync(100);
    expect(h.count('a')).toBe(5);
    expect(h.calls[4]?.at).toBe(at + 100);
    await h.queue.stop();
  });

  it('uses the default retry delays when none are given', async () => {
    const h = new Harness({ workers: 1 });
    h.behaviour = () => Promise.reject(new Error('boom'));
    h.queue.add('a');
    await vi.advanceTimersByTimeAsync(99);
    expect(h.count('a')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.count('a')).toBe(2);
    await h.queue.stop();
  });

  it('keeps backoff per key', async () => {
    const h = new Harness({ workers: 2, minRetryMs: 100 });
    h.behaviour = (key) => (key === 'bad' ? Promise.reject(new Error('boom')) : Promise.resolve(undefined));
    h.queue.add('bad');
    await vi.advanceTimersByTimeAsync(300);
    expect(h.count('bad')).toBe(3);
    h.queue.add('good');
    await settle();
    expect(h.count('good')).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.count('good')).toBe(1);
    await h.queue.stop();
  });

  it('requeues after requeueAfterMs, and not before', async () => {
    const h = new Harness({ workers: 1 });
    h.behaviour = (_key, call) => Promise.resolve(call === 0 ? { requeueAfterMs: 500 } : undefined);
    h.queue.add('a');
    await vi.advanceTimersByTimeAsync(499);
    expect(h.count('a')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.count('a')).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.count('a')).toBe(2);
    await h.queue.stop();
  });

  it('requeues at once with requeueAfterMs 0', async () => {
    const h = new Harness({ workers: 1 });
    h.behaviour = (_key, call) => Promise.resolve(call < 2 ? { requeueAfterMs: 0 } : undefined);
    h.queue.add('a');
    await vi.advanceTimersByTimeAsync(10);
    expect(h.count('a')).toBe(3);
    await h.queue.stop();
  });

  it('retries a failure after its backoff even when a longer requeue is pending', async () => {
    const h = new Harness({ workers: 1, minRetryMs: 100 });
    // First pass asks to look again in a minute; the next pass (triggered by an event) fails.
    h.behaviour = (_key, call) => (call === 1 ? Promise.reject(new Error('conflict')) : Promise.resolve(call === 0 ? { requeueAfterMs: 60_000 } : undefined));
    h.queue.add('a');
    await settle();
    h.queue.add('a');
    await settle();
    expect(h.count('a')).toBe(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(h.count('a')).toBe(3);
    await h.queue.stop();
  });

  it('honours a shorter requeueAfterMs than one already pending', async () => {
    const h = new Harness({ workers: 1 });
    h.behaviour = (_key, call) => Promise.resolve(call === 0 ? { requeueAfterMs: 60_000 } : call === 1 ? { requeueAfterMs: 1_000 } : undefined);
    h.queue.add('a');
    await settle();
    h.queue.add('a');
    await settle();
    expect(h.count('a')).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(h.count('a')).toBe(3);
    await h.queue.stop();
  });

  it('honours requeueAfterMs 0 while a retry backoff is pending', async () => {
    // The binder's pattern: a step fails (retry in 1 s), an event reruns it at once, that pass
    // does one step and asks to continue immediately: it must not wait for the old retry.
    const h = new Harness({ workers: 1, minRetryMs: 1_000 });
    h.behaviour = (_key, call) => (call === 0 ? Promise.reject(new Error('conflict')) : Promise.resolve(call === 1 ? { requeueAfterMs: 0 } : undefined));
    h.queue.add('a');
    await settle();
    h.queue.add('a');
    await vi.advanceTimersByTimeAsync(10);
    expect(h.count('a')).toBe(3);
    await h.queue.stop();
  });

  it('stop() waits for the reconciles in flight and then nothing else runs', async () => {
    const h = new Harness({ workers: 2 });
    const gate = h.gate('a');
    h.behaviour = (key, call) => (key === 'a' && call === 0 ? h.waitGate(key).then(() => ({ requeueAfterMs: 10 })) : Promise.reject(new Error('boom')));
    h.queue.add('a');
    h.queue.add('b'); // fails and schedules a retry
    await settle();
    h.queue.add('a'); // dirty while processing
    let stopped = false;
    const stopping = h.queue.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    gate.resolve();
    await settle();
    await stopping;
    expect(stopped).toBe(true);
    expect(h.running.get('a')).toBe(0);
    const calls = h.calls.length;
    h.queue.add('c');
    h.queue.addAfter('d', 1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.calls.length).toBe(calls);
    expect(h.count('b')).toBe(1);
    expect(h.count('a')).toBe(1);
  });

  it('stop() resolves at once when idle', async () => {
    const h = new Harness({ workers: 1 });
    h.queue.addAfter('a', 1_000);
    await h.queue.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(h.calls).toEqual([]);
  });

  it('addAfter adds the key after the delay', async () => {
    const h = new Harness({ workers: 1 });
    h.queue.addAfter('a', 250);
    await vi.advanceTimersByTimeAsync(249);
    expect(h.count('a')).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.count('a')).toBe(1);
    await h.queue.stop();
  });
  it('runs nothing before start(), then everything added before', async () => {
    const calls: string[] = [];
    const queue = new WorkQueue(
      (key) => {
        calls.push(key);
        return Promise.resolve(undefined);
      },
      { workers: 2 },
      () => undefined,
    );
    queue.add('a');
    queue.add('b');
    queue.add('a');
    await Promise.resolve();
    expect(calls).toEqual([]);
    queue.start();
    await vi.waitFor(() => {
      expect(calls).toEqual(['a', 'b']);
    });
    await queue.stop();
  });

  it('tells its observer of each key queued, the depth, how long each waited and how each reconcile ended', async () => {
    const seen = { added: 0, depths: [] as number[], waited: [] as number[], reconciled: [] as string[] };
    const h = new Harness({
      workers: 1,
      observer: {
        added: () => (seen.added += 1),
        depth: (keys) => seen.depths.push(keys),
        started: (waitedSeconds) => {
          seen.waited.push(waitedSeconds);
          return { finished: (outcome) => seen.reconciled.push(outcome) };
        },
      },
    });
    const busy = h.gate('busy');
    h.behaviour = (key, call) => {
      if (key === 'busy') return h.waitGate(key).then(() => undefined);
      if (key === 'fails' && call === 0) return Promise.reject(new Error('no'));
      return Promise.resolve(key === 'later' ? { requeueAfterMs: 60_000 } : undefined);
    };
    h.queue.add('busy');
    h.queue.add('fails');
    h.queue.add('fails');
    h.queue.add('later');
    await settle();
    // A key already queued is not added again; two wait behind the busy one.
    expect([seen.added, seen.depths.at(-1)]).toEqual([3, 2]);
    await vi.advanceTimersByTimeAsync(250);
    busy.resolve();
    await settle();
    expect(seen.reconciled).toEqual(['success', 'error', 'requeue_after']);
    expect(seen.depths.at(-1)).toBe(0);
    // The busy key was taken at once; the two behind it waited while it ran.
    expect(seen.waited.map((seconds) => Math.round(seconds * 1000))).toEqual([0, 250, 250]);
    // The failed key comes back after its backoff: queued again, then a success.
    await vi.advanceTimersByTimeAsync(1000);
    expect([seen.added, seen.reconciled.at(-1)]).toEqual([4, 'success']);
    await h.queue.stop();
  });
});
