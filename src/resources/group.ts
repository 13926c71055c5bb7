import type { ApiGroupVersion } from '../api/resource.js';
import { hardwareDataResource } from './hardwaredata/descriptor.js';
import { hostClaimResource } from './hostclaim/descriptor.js';

/** The one group/version this server serves. */
export const tenancyV1alpha1: ApiGroupVersion = {
  group: 'tenancy.metal3.io',
  version: 'v1alpha1',
  resources: [hostClaimResource, hardwareDataResource],
};
