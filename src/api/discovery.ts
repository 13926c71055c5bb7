/**
 * Discovery documents for the served group: legacy APIGroupList/APIGroup/
 * APIResourceList, and aggregated discovery v2 (APIGroupDiscoveryList) with
 * its exact media type and an ETag, so the aggregator caches it instead of
 * falling back. Only verbs the resources really serve are advertised.
 */
import type { ApiGroupVersion, ResourceDescriptor } from './resource.js';
import { groupVersionString } from './resource.js';
import { isPlainJson, type MediaRange, type Offer } from './negotiation.js';

export const discoveryV2ContentType = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export function apiResourceList(gv: ApiGroupVersion): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersionString(gv),
    resources: gv.resources.flatMap((r) => [resourceEntry(r), ...subresourceEntries(r)]),
  };
}

function resourceEntry(r: ResourceDescriptor): object {
  return {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: [...r.verbs],
    ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
    ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
  };
}

function subresourceEntries(r: ResourceDescriptor): object[] {
  return r.subresources.map((s) => ({
    name: `${r.plural}/${s.name}`,
    singularName: '',
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: [...s.verbs],
  }));
}

function groupVersionForDiscovery(gv: ApiGroupVersion): object {
  return { groupVersion: groupVersionString(gv), version: gv.version };
}

function groupEntry(gv: ApiGroupVersion): object {
  return { name: gv.group, versions: [groupVersionForDiscovery(gv)], preferredVersion: groupVersionForDiscovery(gv) };
}

export function apiGroup(gv: ApiGroupVersion): object {
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(gv) };
}

export function apiGroupList(gv: ApiGroupVersion): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [groupEntry(gv)] };
}

export function aggregatedDiscovery(gv: ApiGroupVersion): object {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [
      {
        metadata: { name: gv.group },
        versions: [
          {
            version: gv.version,
            freshness: 'Current',
            resources: gv.resources.map((r) => ({
              resource: r.plural,
              responseKind: { group: gv.group, version: gv.version, kind: r.kind },
              scope: r.namespaced ? 'Namespaced' : 'Cluster',
              singularResource: r.singular,
              verbs: [...r.verbs],
              ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
              ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
              ...(r.subresources.length > 0
                ? {
                    subresources: r.subresources.map((s) => ({
                      subresource: s.name,
                      responseKind: { group: gv.group, version: gv.version, kind: r.kind },
                      verbs: [...s.verbs],
                    })),
                  }
                : {}),
            })),
          },
        ],
      },
    ],
  };
}

export function isDiscoveryV2(range: MediaRange): boolean {
  return (
    range.type === 'application' &&
    range.subtype === 'json' &&
    range.params['g'] === 'apidiscovery.k8s.io' &&
    range.params['v'] === 'v2' &&
    range.params['as'] === 'APIGroupDiscoveryList'
  );
}

export type DiscoveryFormat = 'legacy' | 'v2';

export const rootDiscoveryOffers: readonly Offer<DiscoveryFormat>[] = [
  { value: 'v2', matches: isDiscoveryV2 },
  { value: 'legacy', matches: isPlainJson },
];

export const legacyOnlyOffers: readonly Offer<DiscoveryFormat>[] = [{ value: 'legacy', matches: isPlainJson }];
