import { describe, expect, it } from 'vitest';
import { IdleHeapPolicy } from '../../../src/observability/idle-heap-release.js';

const MiB = 2 ** 20;
const sample = (utilization: number, slackMiB = 100) => ({ utilization, committedBytes: (130 + slackMiB) * MiB, usedBytes: 130 * MiB });

describe('IdleHeapPolicy', () => {
  it('releases once when the server goes idle after a burst, and not again until the next busy interval', () => {
    const policy = new IdleHeapPolicy();
    // Starting up is a burst: the first idle interval releases.
    expect([sample(0.9), sample(0.5), sample(0.01), sample(0.01), sample(0)].map((s) => policy.next(s))).toEqual([false, false, true, false, false]);
    // A busy interval re-arms it.
    expect([sample(0.3), sample(0.02)].map((s) => policy.next(s))).toEqual([false, true]);
  });

  it('never pauses a server under steady load', () => {
    const policy = new IdleHeapPolicy();
    expect([0.3, 0.12, 0.4, 0.08, 0.25, 0.1].map((u) => policy.next(sample(u)))).toEqual([false, false, false, false, false, false]);
  });

  it('leaves a heap with little committed beyond use alone, staying armed for when there is', () => {
    const policy = new IdleHeapPolicy();
    expect(policy.next(sample(0.01, 10))).toBe(false);
    expect(policy.next(sample(0.01, 100))).toBe(true);
  });
});
