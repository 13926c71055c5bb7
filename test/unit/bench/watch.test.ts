import { describe, expect, it } from 'vitest';
import type { WatchAnswer, WatchStream } from '../../../test/bench/h2.js';
import { medianWatch, watchRetrying, type WatchRun } from '../../../test/bench/watch.js';

function run(overrides: Partial<WatchRun>): WatchRun {
  return { watchers: 1000, refused: 0, refusedStatuses: {}, retried: 0, errorEvents: 0, writes: 20, expected: 20000, delivered: 20000, p50Ms: 50, p99Ms: 90, rssAddedMb: 100, establishMs: 3000, ...overrides };
}

describe('medianWatch', () => {
  it('judges completeness on the worst repetition, so one refused burst of three shows', () => {
    // Session 20's make bench: the first repetition had 194 watches refused with 429, the other two none.
    const runs = [run({ watchers: 806, refused: 194, refusedStatuses: { '429': 194 }, expected: 16120, delivered: 16120, p99Ms: 85.4 }), run({ p99Ms: 106.1 }), run({ p99Ms: 85.5 })];
    const summary = medianWatch(runs);
    expect([summary.watchers, summary.refused, summary.refusedStatuses]).toEqual([806, 194, { '429': 194 }]);
    expect(summary.p99Ms).toBe(85.5);
  });

  it('shows events lost in any repetition, and ERROR events', () => {
    expect(medianWatch([run({}), run({ delivered: 19990 }), run({})]).delivered).toBe(19990);
    expect(medianWatch([run({ errorEvents: 2 }), run({}), run({})]).errorEvents).toBe(2);
  });

  it('takes timings as medians and the RSS added as the largest', () => {
    const summary = medianWatch([run({ p50Ms: 40, establishMs: 2000, rssAddedMb: 20 }), run({ p50Ms: 60, establishMs: 4000, rssAddedMb: 120 }), run({ p50Ms: 50, establishMs: 3000, rssAddedMb: 90 })]);
    expect([summary.p50Ms, summary.establishMs, summary.rssAddedMb]).toEqual([50, 3000, 120]);
  });
});

describe('watchRetrying', () => {
  /** A client whose watches are answered in turn by `answers`; records what was opened and closed. */
  function fakeClient(answers: WatchAnswer[]) {
    const opened: string[] = [];
    let closed = 0;
    return {
      opened,
      closed: () => closed,
      watch(path: string): WatchStream {
        opened.push(path);
        const answer = answers.shift() ?? { status: 200 };
        return { established: Promise.resolve(answer), close: () => (closed += 1) };
      },
    };
  }

  it('retries a 429 with Retry-After, as client-go does, and counts each retry', async () => {
    const client = fakeClient([{ status: 429, retryAfterSeconds: 0.01 }, { status: 429, retryAfterSeconds: 0.01 }, { status: 200 }]);
    let retries = 0;
    const stream = watchRetrying(client, '/w', () => (retries += 1), () => undefined);
    expect((await stream.established).status).toBe(200);
    expect([client.opened.length, retries, client.closed()]).toEqual([3, 2, 2]);
  });

  it('does not retry other refusals, nor a 429 without Retry-After', async () => {
    for (const answer of [{ status: 403 }, { status: 429 }, { status: 500, retryAfterSeconds: 1 }]) {
      const client = fakeClient([answer, { status: 200 }]);
      let retries = 0;
      const stream = watchRetrying(client, '/w', () => (retries += 1), () => undefined);
      expect((await stream.established).status).toBe(answer.status);
      expect([client.opened.length, retries]).toEqual([1, 0]);
    }
  });

  it('gives up after ten retries with the last answer', async () => {
    const client = fakeClient(Array.from({ length: 20 }, () => ({ status: 429, retryAfterSeconds: 0.001 })));
    let retries = 0;
    const stream = watchRetrying(client, '/w', () => (retries += 1), () => undefined);
    expect((await stream.established).status).toBe(429);
    expect([client.opened.length, retries]).toEqual([11, 10]);
  });
});
