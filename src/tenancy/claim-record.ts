/**
 * The HostClaimRecord: the backing object of a HostClaim (a CRD this project
 * owns, in the storage namespace) and what a bound host's consumerRef names
 * (host-references.ts). Its identity lives here, below both the HostClaim
 * resource that stores claims in it and the tenancy rules that bind hosts to it.
 */
export const hostClaimRecord = {
  group: 'infra.tenancy.metal3.io',
  version: 'v1alpha1',
  kind: 'HostClaimRecord',
  plural: 'hostclaimrecords',
  singular: 'hostclaimrecord',
} as const;
