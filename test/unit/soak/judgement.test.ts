import { describe, expect, it } from 'vitest';
import { compare } from '../../soak/informer.js';
import { rssGrowth, type RssSample } from '../../soak/replicas.js';

const samples = (pid: number, from: number, values: number[]): RssSample[] =>
  values.map((rssMiB, i) => ({ atSeconds: from + 60 * i, replica: 'direct', pid, rssMiB, heapUsedMiB: undefined, heapTotalMiB: undefined, externalMiB: undefined }));

describe('rssGrowth', () => {
  it('compares the median of the last quarter of samples after warm-up (at least three) with the median of the first quarter', () => {
    const started = new Map([[7, 0]]);
    // Warm-up (300 s) excludes the first five samples.
    const rss = samples(7, 0, [50, 80, 90, 95, 99, 100, 104, 98, 101, 103, 110, 102, 108]);
    expect(rssGrowth(rss, started, 300)).toEqual([{ replica: 'direct', pid: 7, samples: 8, baselineMiB: 100, finalMiB: 108, growth: expect.closeTo(0.08, 10) as number }]);
  });

  it('takes a quarter of the samples on each side once there are more than twelve, so one high or low sample does not decide', () => {
    const started = new Map([[3, 0]]);
    // 16 samples (no warm-up): windows of 4; medians (100 + 102) / 2 and (110 + 112) / 2.
    const rss = samples(3, 0, [90, 100, 102, 150, 80, 120, 120, 120, 120, 120, 120, 120, 110, 112, 60, 200]);
    expect(rssGrowth(rss, started, 0)).toEqual([{ replica: 'direct', pid: 3, samples: 16, baselineMiB: 101, finalMiB: 111, growth: expect.closeTo(10 / 101, 10) as number }]);
  });

  it('does not judge a process with fewer than six samples after its warm-up, and judges each process on its own', () => {
    const started = new Map([
      [1, 0],
      [2, 600],
    ]);
    const rss = [...samples(1, 0, [100, 100, 100, 100, 100, 100, 100, 100]), ...samples(2, 600, [100, 120, 130, 140, 150, 160, 170])];
    expect(rssGrowth(rss, started, 120)).toEqual([{ replica: 'direct', pid: 1, samples: 6, baselineMiB: 100, finalMiB: 100, growth: 0 }]);
  });
});

describe('compare', () => {
  it('names what a cache misses, holds in excess, or holds at another resourceVersion', () => {
    const cache = new Map([
      ['a/x', '1'],
      ['a/y', '5'],
      ['b/z', '3'],
    ]);
    const list = new Map([
      ['a/x', '1'],
      ['a/y', '6'],
      ['b/w', '4'],
    ]);
    expect(compare(cache, list)).toEqual({ missing: ['b/w'], extra: ['b/z'], stale: ['a/y'] });
    expect(compare(list, list)).toEqual({ missing: [], extra: [], stale: [] });
  });
});
