import { describe, expect, it } from 'vitest';
import { aggregatedDiscovery, apiResourceList, isDiscoveryV2, rootDiscoveryOffers } from '../../../src/api/discovery.js';
import { tenancyV1alpha1 } from '../../../src/resources/group.js';
import { negotiate, parseAccept } from '../../../src/api/negotiation.js';
import type { ApiGroupVersion } from '../../../src/api/resource.js';
import { ApiError } from '../../../src/api/status.js';

const withVerbs: ApiGroupVersion = {
  ...tenancyV1alpha1,
  resources: tenancyV1alpha1.resources.map((r) => ({ ...r, verbs: ['get', 'list', 'watch'] })),
};

describe('legacy discovery', () => {
  it('lists both resources with names, kinds, short names and categories, and the status subresource', () => {
    const doc = apiResourceList(withVerbs) as { groupVersion: string; resources: Record<string, unknown>[] };
    expect(doc.groupVersion).toBe('tenancy.metal3.io/v1alpha1');
    expect(doc.resources.map((r) => r['name'])).toEqual(['hostclaims', 'hostclaims/status', 'hardwaredata']);
    expect(doc.resources[0]).toEqual({
      name: 'hostclaims',
      singularName: 'hostclaim',
      namespaced: true,
      kind: 'HostClaim',
      verbs: ['get', 'list', 'watch'],
      shortNames: ['hc'],
      categories: ['metal3'],
    });
  });

  it('advertises exactly the verbs the descriptors declare', () => {
    const doc = apiResourceList(tenancyV1alpha1) as { resources: { name: string; verbs: string[] }[] };
    for (const entry of doc.resources) {
      const [plural, sub] = entry.name.split('/');
      const resource = tenancyV1alpha1.resources.find((r) => r.plural === plural);
      const declared = sub === undefined ? resource?.verbs : resource?.subresources.find((s) => s.name === sub)?.verbs;
      expect(entry.verbs).toEqual(declared);
    }
  });
});

describe('aggregated discovery v2', () => {
  it('always sets responseKind and scope', () => {
    const doc = aggregatedDiscovery(withVerbs) as { items: { versions: { resources: Record<string, unknown>[] }[] }[] };
    const resources = doc.items[0]?.versions[0]?.resources ?? [];
    expect(resources).toHaveLength(2);
    for (const r of resources) {
      expect(r['scope']).toBe('Namespaced');
      expect(r['responseKind']).toMatchObject({ group: 'tenancy.metal3.io', version: 'v1alpha1' });
    }
    expect(resources[0]?.['subresources']).toEqual([
      { subresource: 'status', responseKind: { group: 'tenancy.metal3.io', version: 'v1alpha1', kind: 'HostClaim' }, verbs: ['get', 'patch', 'update'] },
    ]);
  });

  it('is chosen only for the exact v2 media type, in Accept order', () => {
    const v2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const v2beta1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
    expect(negotiate(`${v2},application/json`, rootDiscoveryOffers, [])).toBe('v2');
    expect(negotiate(`${v2beta1},application/json`, rootDiscoveryOffers, [])).toBe('legacy');
    expect(negotiate('application/json', rootDiscoveryOffers, [])).toBe('legacy');
    expect(negotiate(undefined, rootDiscoveryOffers, [])).toBe('legacy');
    expect(parseAccept(v2).map(isDiscoveryV2)).toEqual([true]);
    expect(() => negotiate(v2beta1, rootDiscoveryOffers, ['application/json'])).toThrow(ApiError);
  });
});
