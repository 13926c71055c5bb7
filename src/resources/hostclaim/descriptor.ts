import type { ResourceDescriptor } from '../../api/resource.js';

export const hostClaimResource: ResourceDescriptor = {
  plural: 'hostclaims',
  singular: 'hostclaim',
  kind: 'HostClaim',
  listKind: 'HostClaimList',
  namespaced: true,
  shortNames: ['hc'],
  categories: ['metal3'],
  // Verbs are added here as the generic REST layer serves them (issue 3).
  verbs: [],
  subresources: [{ name: 'status', verbs: [] }],
  schemaName: 'HostClaim',
};
