/** Fixtures the output representation tests share: a HostClaim, its printer columns, a fixed clock. */
import type { TableColumn } from '../../../../src/api/rest/table.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';

export const G = 'tenancy.metal3.io';
export const V = 'v1alpha1';
export const K = 'HostClaim';

const NOW = Date.parse('2026-08-01T12:00:00Z');
export const now = (): number => NOW;

export function claim(name: string, extra: Partial<ApiObject['metadata']> = {}, rest: Record<string, unknown> = {}): ApiObject {
  return {
    apiVersion: `${G}/${V}`,
    kind: K,
    metadata: {
      name,
      namespace: 'team-a',
      uid: `uid-${name}`,
      resourceVersion: '42',
      creationTimestamp: '2026-08-01T11:55:00Z',
      ...extra,
    },
    spec: { image: { url: 'http://img' } },
    ...rest,
  };
}

export const COLUMNS: readonly TableColumn[] = [
  {
    name: 'Host',
    type: 'string',
    description: 'The BareMetalHost bound to the claim.',
    priority: 0,
    value: (o) => (o['status'] as { host?: unknown } | undefined)?.host,
  },
  {
    name: 'Image',
    type: 'string',
    format: 'uri',
    description: 'The image deployed.',
    priority: 1,
    value: (o) => (o['spec'] as { image?: { url?: unknown } }).image?.url,
  },
];
