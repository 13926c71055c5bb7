import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeOnce, keepEncoding, listJson, objectJson } from '../../../../src/api/rest/serialized.js';
import type { ApiObject, ObjectList } from '../../../../src/api/rest/types.js';

const claim = (name: string): ApiObject => ({
  apiVersion: 'tenancy.metal3.io/v1alpha1',
  kind: 'HostClaim',
  metadata: { name, namespace: 'tenant-a', resourceVersion: '7', labels: { app: 'wéb', html: '<&>' } },
  spec: { poweredOn: false, n: 1.5, nothing: null },
});

describe('serialized objects', () => {
  const kept = (name: string): ApiObject => {
    const object = claim(name);
    keepEncoding(object);
    return object;
  };

  it('encodes an object its store keeps once and reuses the same bytes', () => {
    const object = kept('a');
    const first = objectJson(object);
    expect(first.toString('utf8')).toBe(JSON.stringify(object));
    expect(objectJson(object)).toBe(first);
  });

  it('keeps nothing of an object computed for one answer: each encoding is new', () => {
    const object = claim('computed');
    const first = objectJson(object);
    expect(first.toString('utf8')).toBe(JSON.stringify(object));
    expect(objectJson(object)).not.toBe(first);
  });

  it("keeps an object's bytes in an allocation of their own, not a slice of the shared Buffer pool", () => {
    const bytes = objectJson(kept('pool'));
    // A pool slice would keep the whole slab (and everything else in it) alive as long as the cache holds the object.
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(bytes.length);
    expect(bytes.toString('utf8')).toBe(JSON.stringify(claim('pool')));
  });

  it('writes a list byte for byte as JSON.stringify, whatever the place of items among its keys, and kept or computed items mixed', () => {
    const items = [claim('a'), kept('b'), kept('c'), claim('d')];
    const lists: ObjectList[] = [
      { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaimList', metadata: { resourceVersion: '9', continue: 'x' }, items },
      { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaimList', metadata: {}, items: [] },
      { items, apiVersion: 'v', kind: 'k', metadata: { remainingItemCount: 3 } },
      { apiVersion: 'v', items, kind: 'k', metadata: {} },
    ];
    for (const list of lists) expect(listJson(list).toString('utf8')).toBe(JSON.stringify(list));
  });

  describe('values objects share', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('encodes a shared value once for every object holding it, each object still byte for byte JSON.stringify', () => {
      const spec = { hardware: { cpu: { count: 64, flags: ['aes', 'avx'] }, hostname: 'wé<b>' }, empty: null };
      encodeOnce(spec);
      const objects: ApiObject[] = ['tenant-a', 'tenant-b', 'tenant-c'].map((namespace) => ({
        apiVersion: 'tenancy.metal3.io/v1alpha1',
        kind: 'HardwareData',
        metadata: { name: 'infra.node-1', namespace },
        spec,
      }));
      const expected = objects.map((object) => JSON.stringify(object));
      const stringify = vi.spyOn(JSON, 'stringify');
      expect(objects.map((object) => objectJson(object).toString('utf8'))).toEqual(expected);
      expect(stringify.mock.calls.filter(([value]) => value === spec)).toHaveLength(1);
    });

    it('leaves out members without JSON and keeps the order of the keys, as JSON.stringify does', () => {
      const status = { phase: 'x' };
      encodeOnce(status);
      const object = { status, kind: 'K', apiVersion: 'v', metadata: { name: 'n' }, gone: undefined, fn: () => 1 } as unknown as ApiObject;
      expect(objectJson(object).toString('utf8')).toBe(JSON.stringify(object));
    });
  });
});
