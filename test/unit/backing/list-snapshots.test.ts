import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../src/api/rest/types.js';
import { ListSnapshots } from '../../../src/backing/list-snapshots.js';

const items = (name: string): ApiObject[] => [{ apiVersion: 'v1', kind: 'K', metadata: { name } }];

describe('ListSnapshots', () => {
  it('keeps a snapshot for its time to live after its last use, then drops it', () => {
    let now = 0;
    const snapshots = new ListSnapshots(4, 1000, () => now);
    snapshots.put('list', items('a'));
    now = 900;
    expect(snapshots.get('list')?.[0]?.metadata.name).toBe('a');
    // The read renewed it.
    now = 1800;
    expect(snapshots.get('list')?.[0]?.metadata.name).toBe('a');
    now = 2801;
    expect(snapshots.get('list')).toBeUndefined();
    expect(snapshots.size).toBe(0);
  });

  it('drops the least recently used beyond its capacity', () => {
    const snapshots = new ListSnapshots(2, 60_000, () => 0);
    snapshots.put('one', items('1'));
    snapshots.put('two', items('2'));
    snapshots.get('one');
    snapshots.put('three', items('3'));
    expect([snapshots.get('one') !== undefined, snapshots.get('two') !== undefined, snapshots.get('three') !== undefined]).toEqual([true, false, true]);
  });

  it('drops expired snapshots when another is kept, so memory does not wait for a read', () => {
    let now = 0;
    const snapshots = new ListSnapshots(8, 1000, () => now);
    snapshots.put('old', items('o'));
    now = 1500;
    snapshots.put('new', items('n'));
    expect(snapshots.size).toBe(1);
  });
});
