import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InputMerge } from '../../../../src/resources/hardwaredata/input-merge.js';

describe('InputMerge', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function merge() {
    const applied: string[] = [];
    const progress: bigint[] = [];
    const prodded: string[] = [];
    const m = new InputMerge({ position: (rv) => rv, onProgress: (rv) => progress.push(rv), prod: (input) => prodded.push(input), prodDelayMs: 100 });
    m.addInput('hosts');
    m.addInput('policies');
    const add = (input: string, rv: number) => {
      m.enqueue(input, BigInt(rv), (position) => applied.push(`${input}@${position}`));
    };
    return { m, applied, progress, prodded, add };
  }

  it('applies changes in revision order once every other input has passed them, whatever order they arrive in', () => {
    const { m, applied, progress, add } = merge();
    m.relist('hosts', 10n, false);
    m.relist('policies', 10n, false);
    add('policies', 120);
    add('hosts', 100);
    expect(applied).toEqual(['hosts@100']);
    add('hosts', 130);
    expect(applied).toEqual(['hosts@100', 'policies@120']);
    m.advance('policies', 140n);
    expect(applied).toEqual(['hosts@100', 'policies@120', 'hosts@130']);
    expect(progress.at(-1)).toBe(130n);
  });

  it('prods an input that holds changes up, and stops waiting on one that is not served', () => {
    const { m, applied, prodded, add } = merge();
    m.relist('hosts', 10n, false);
    m.relist('policies', 10n, false);
    add('hosts', 100);
    expect(applied).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(prodded).toEqual(['policies']);
    m.relist('policies', 0n, true);
    expect(applied).toEqual(['hosts@100']);
  });
});
