import type { ApiGroupVersion } from './resource.js';
import { hardwareDataResource } from '../resources/hardwaredata/descriptor.js';
import { hostClaimResource } from '../resources/hostclaim/descriptor.js';

/** The one group/version this server serves. */
export const tenancyV1alpha1: ApiGroupVersion = {
  group: 'tenancy.metal3.io',
  version: 'v1alpha1',
  resources: [hostClaimResource, hardwareDataResource],
};
