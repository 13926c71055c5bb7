import v8 from 'node:v8';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { internalized, internStrings } from '../../../src/backing/interned-strings.js';
import { fullCollector } from '../../support/full-gc.js';

/** Heap kept by `count` decoded hosts whose disk model, device and condition message repeat (serials do not). */
function heapKeptBy(count: number, intern: boolean, gc: () => void): number {
  gc();
  const before = v8.getHeapStatistics().used_heap_size;
  const kept: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const decoded: unknown = JSON.parse(
      `{"storage":[{"model":"Samsung PM1733 enterprise","name":"/dev/nvme${i % 4}n1","serialNumber":"S${i}X"}],` +
        `"conditions":[{"type":"Associated","message":"No available host matches the claim among the hosts this namespace may use"}]}`,
    );
    kept.push(intern ? internStrings(decoded) : decoded);
  }
  gc();
  const after = v8.getHeapStatistics().used_heap_size;
  expect(kept).toHaveLength(count);
  return after - before;
}

describe('interned strings', () => {
  it('leaves every decoded JSON value equal to what it was, at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy: unknown = structuredClone(value);
        expect(internStrings(copy)).toEqual(value);
      }),
    );
  });

  it('gives back an equal string, long ones and numeric ones included', () => {
    for (const value of ['', 'a', '123', '__proto__', 'constructor', 'x'.repeat(300), 'é€ 😀']) expect(internalized(value)).toBe(value);
  });

  it('leaves frozen values as they are', () => {
    const frozen = Object.freeze({ a: 'x', nested: Object.freeze(['y']) });
    const value = { frozen, b: ['z', { c: 'w' }] };
    expect(internStrings(value)).toEqual({ frozen: { a: 'x', nested: ['y'] }, b: ['z', { c: 'w' }] });
  });

  it('keeps one copy of equal values: the heap kept by decoded objects shrinks by their repeated strings', () => {
    const gc = fullCollector();
    const plain = heapKeptBy(20_000, false, gc);
    const interned = heapKeptBy(20_000, true, gc);
    // Each object repeats ~130 bytes of strings (more as V8 stores them); the objects themselves remain.
    expect(interned).toBeLessThan(plain * 0.75);
  });
});
