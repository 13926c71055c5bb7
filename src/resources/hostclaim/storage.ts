/** HostClaims are stored as HostClaimRecords (a CRD this project owns) in the storage namespace. */
import type { SchemaSource } from '../../api/openapi/schema-source.js';
import { customResourceDefinition } from '../../backing/crd.js';
import { controllerAnnotationPrefix, StorageMapping } from '../../backing/storage-mapping.js';

export const hostClaimRecord = {
  group: 'infra.tenancy.metal3.io',
  version: 'v1alpha1',
  kind: 'HostClaimRecord',
  plural: 'hostclaimrecords',
  singular: 'hostclaimrecord',
} as const;

/**
 * On a record: the bound host's error text (BMC details replaced), written by
 * the binder for infrastructure admins. A controller annotation: no
 * tenant write can set or drop it and no tenant read shows it.
 */
export const hostErrorAnnotation = `${controllerAnnotationPrefix}host-error`;

export function hostClaimRecordCRD(source: SchemaSource): Record<string, unknown> {
  return customResourceDefinition({ ...hostClaimRecord, schema: source.resolvedObjectSchema('HostClaim') });
}

export function hostClaimStorageMapping(storageNamespace: string): StorageMapping {
  return new StorageMapping(
    { group: 'tenancy.metal3.io', version: 'v1alpha1', kind: 'HostClaim' },
    hostClaimRecord,
    storageNamespace,
  );
}
