/** HostClaims are stored as HostClaimRecords (a CRD this project owns) in the storage namespace. */
import type { SchemaSource } from '../../api/openapi/schema.js';
import { customResourceDefinition, type CustomResourceDefinition } from '../../backing/crd.js';
import { controllerAnnotationPrefix, StorageMapping } from '../../backing/storage-mapping.js';
import { hostClaimRecord } from '../../tenancy/claim-record.js';

/**
 * On a record: the bound host's error text (BMC details replaced), written by
 * the binder for infrastructure admins. A controller annotation: no
 * tenant write can set or drop it and no tenant read shows it.
 */
export const hostErrorAnnotation = `${controllerAnnotationPrefix}host-error`;

/**
 * The HostClaimRecord schema's generation: bump it with every change of the
 * schema (test/unit/resources/hostclaim/storage.test.ts pins the schema's
 * digest to it), so a replica of a rolling upgrade never puts back an older
 * schema over a newer one (backing/crd.ts, docs/operations.md).
 */
export const hostClaimRecordSchemaGeneration = 2;

export function hostClaimRecordCRD(source: SchemaSource): CustomResourceDefinition {
  return customResourceDefinition({
    ...hostClaimRecord,
    schema: source.resolvedObjectSchema('HostClaim'),
    schemaGeneration: hostClaimRecordSchemaGeneration,
  });
}

export function hostClaimStorageMapping(storageNamespace: string): StorageMapping {
  return new StorageMapping(
    { group: 'tenancy.metal3.io', version: 'v1alpha1', kind: 'HostClaim' },
    hostClaimRecord,
    storageNamespace,
  );
}
