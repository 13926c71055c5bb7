import { describe, expect, it } from 'vitest';
import { listJson, objectJson } from '../../../../src/api/rest/serialized.js';
import type { ApiObject, ObjectList } from '../../../../src/api/rest/types.js';

const claim = (name: string): ApiObject => ({
  apiVersion: 'tenancy.metal3.io/v1alpha1',
  kind: 'HostClaim',
  metadata: { name, namespace: 'tenant-a', resourceVersion: '7', labels: { app: 'wéb', html: '<&>' } },
  spec: { poweredOn: false, n: 1.5, nothing: null },
});

describe('serialized objects', () => {
  it('encodes an object once and reuses the same bytes', () => {
    const object = claim('a');
    const first = objectJson(object);
    expect(first.toString('utf8')).toBe(JSON.stringify(object));
    expect(objectJson(object)).toBe(first);
  });

  it('writes a list byte for byte as JSON.stringify, whatever the place of items among its keys', () => {
    const items = [claim('a'), claim('b')];
    const lists: ObjectList[] = [
      { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaimList', metadata: { resourceVersion: '9', continue: 'x' }, items },
      { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaimList', metadata: {}, items: [] },
      { items, apiVersion: 'v', kind: 'k', metadata: { remainingItemCount: 3 } },
      { apiVersion: 'v', items, kind: 'k', metadata: {} },
    ];
    for (const list of lists) expect(listJson(list).toString('utf8')).toBe(JSON.stringify(list));
  });
});
