import type { ResourceDescriptor } from '../../api/resource.js';

export const hostClaimResource: ResourceDescriptor = {
  plural: 'hostclaims',
  singular: 'hostclaim',
  kind: 'HostClaim',
  listKind: 'HostClaimList',
  namespaced: true,
  shortNames: ['hc'],
  categories: ['metal3'],
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'] }],
  schemaName: 'HostClaim',
};
