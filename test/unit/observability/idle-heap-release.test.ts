import { describe, expect, it } from 'vitest';
import v8 from 'node:v8';
import { IdleHeapPolicy, memoryReducingCollection } from '../../../src/observability/idle-heap-release.js';

const MiB = 2 ** 20;
const sample = (utilization: number, rssMiB: number) => ({ utilization, rssBytes: rssMiB * MiB });
const decisions = (policy: IdleHeapPolicy, samples: readonly [number, number][]): boolean[] => samples.map(([utilization, rss]) => policy.next(sample(utilization, rss)));

describe('IdleHeapPolicy', () => {
  it('releases once when the server goes idle after starting up, and not again until a burst grows RSS', () => {
    const policy = new IdleHeapPolicy();
    // Starting up is a burst: the first idle interval releases.
    expect(decisions(policy, [[0.9, 300], [0.5, 320], [0.01, 320], [0.01, 200], [0, 200]])).toEqual([false, false, true, false, false]);
    // A busy interval that grew RSS by 48 MiB or more over the idle low (200) re-arms it for the next idle one.
    expect(decisions(policy, [[0.3, 260], [0.02, 250]])).toEqual([false, true]);
  });

  it('does not pause for a burst that grew nothing: a steady read load re-arms it but RSS stays near its low', () => {
    const policy = new IdleHeapPolicy();
    expect(decisions(policy, [[0.01, 300], [0.01, 180]])).toEqual([true, false]);
    expect(decisions(policy, [[0.4, 220], [0.01, 215], [0.3, 225], [0.02, 227]])).toEqual([false, false, false, false]);
    // Still armed: when RSS reaches the low (180) + 48 MiB in an idle interval, it releases.
    expect(policy.next(sample(0.01, 229))).toBe(true);
  });

  it('never pauses a server under steady load, however large it grows', () => {
    const policy = new IdleHeapPolicy();
    expect([0.3, 0.12, 0.4, 0.08, 0.25, 0.1].map((u, i) => policy.next(sample(u, 300 + 50 * i)))).toEqual([false, false, false, false, false, false]);
  });

  it('measures growth from the lowest idle RSS since the last release, which a later idle low lowers', () => {
    const policy = new IdleHeapPolicy();
    expect(decisions(policy, [[0.01, 300], [0.01, 250], [0.01, 190]])).toEqual([true, false, false]);
    // 250 + 48 would not be reached at 237, but the low is now 190.
    expect(decisions(policy, [[0.5, 260], [0.01, 238]])).toEqual([false, true]);
  });
});

describe('memoryReducingCollection', () => {
  it('gives the heap pages that garbage grew back, not only the garbage', () => {
    const collect = memoryReducingCollection();
    collect();
    const before = v8.getHeapStatistics().total_heap_size;
    // Built and dropped inside a function: unreachable once it returns, still committed until collected.
    const build = (): number => Array.from({ length: 400_000 }, (_, index) => ({ index, text: `item-${index}` })).length;
    expect(build()).toBe(400_000);
    const grown = v8.getHeapStatistics().total_heap_size;
    collect();
    const after = v8.getHeapStatistics().total_heap_size;
    expect(grown - before).toBeGreaterThan(20 * MiB);
    // Committed heap back to about what it was before the garbage.
    expect(after).toBeLessThan(before + 8 * MiB);
  });
});
