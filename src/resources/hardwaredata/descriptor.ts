import type { ResourceDescriptor } from '../../api/resource.js';

export const hardwareDataResource: ResourceDescriptor = {
  plural: 'hardwaredata',
  singular: 'hardwaredata',
  kind: 'HardwareData',
  listKind: 'HardwareDataList',
  namespaced: true,
  shortNames: [],
  categories: ['metal3'],
  // A read-only projection of BareMetalHosts (see projection.ts).
  verbs: ['get', 'list', 'watch'],
  subresources: [],
  schemaName: 'HardwareData',
};
