import type { ResourceDescriptor } from '../../api/resource.js';

export const hardwareDataResource: ResourceDescriptor = {
  plural: 'hardwaredata',
  singular: 'hardwaredata',
  kind: 'HardwareData',
  listKind: 'HardwareDataList',
  namespaced: true,
  shortNames: [],
  categories: ['metal3'],
  // Read-only resource; get/list/watch are added when served.
  verbs: [],
  subresources: [],
  schemaName: 'HardwareData',
};
