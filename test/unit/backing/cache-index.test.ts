import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CacheIndex } from '../../../src/backing/cache-index.js';

interface Item {
  readonly key: string;
  readonly version: number;
  readonly values: readonly string[];
}

const byValues = (item: Item): readonly string[] => item.values;

/** What the cache does with an index: objects stored (replacing the previous version of their key) and removed. */
type Operation = { readonly store: Item } | { readonly remove: string };

const keys = fc.constantFrom('a', 'b', 'c', 'd');
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    store: fc.record({ key: keys, version: fc.nat(), values: fc.uniqueArray(fc.constantFrom('x', 'y', 'z'), { maxLength: 2 }) }),
  }),
  fc.record({ remove: keys }),
);

describe('a shared cache index', () => {
  it('answers every value with the objects that hold it, whatever the order of stores and removals', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), (operations) => {
        const index = new CacheIndex(byValues);
        const cache = new Map<string, Item>();
        for (const op of operations) {
          const key = 'store' in op ? op.store.key : op.remove;
          const old = cache.get(key);
          if (old !== undefined) index.remove(key, old);
          cache.delete(key);
          if ('store' in op) {
            cache.set(key, op.store);
            index.add(key, op.store);
          }
          for (const value of ['x', 'y', 'z']) {
            const expected = [...cache.values()].filter((item) => item.values.includes(value));
            expect(sortedByKey(index.get(value))).toEqual(sortedByKey(expected));
          }
        }
      }),
    );
  });

  it('replaces an object re-added under its key, alone or beside others', () => {
    const index = new CacheIndex(byValues);
    index.add('a', { key: 'a', version: 1, values: ['x'] });
    index.add('a', { key: 'a', version: 2, values: ['x'] });
    expect(index.get('x').map((item) => item.version)).toEqual([2]);
    index.add('b', { key: 'b', version: 1, values: ['x'] });
    index.add('b', { key: 'b', version: 2, values: ['x'] });
    expect(sortedByKey(index.get('x')).map((item) => `${item.key}${item.version}`)).toEqual(['a2', 'b2']);
  });

  it('forgets everything when cleared', () => {
    const index = new CacheIndex(byValues);
    index.add('a', { key: 'a', version: 1, values: ['x', 'y'] });
    index.add('b', { key: 'b', version: 1, values: ['x'] });
    index.clear();
    expect(index.get('x')).toEqual([]);
    expect(index.get('y')).toEqual([]);
  });
});

function sortedByKey(items: readonly Item[]): Item[] {
  return [...items].sort((a, b) => a.key.localeCompare(b.key));
}
