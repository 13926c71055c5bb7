import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../src/api/rest/types.js';
import { shareFieldSets } from '../../../src/backing/shared-field-sets.js';
import { StorageMapping, backingName, bookkeeping, virtualUid } from '../../../src/backing/storage-mapping.js';

const mapping = new StorageMapping(
  { group: 'tenancy.metal3.io', version: 'v1alpha1', kind: 'HostClaim' },
  { group: 'infra.tenancy.metal3.io', version: 'v1alpha1', kind: 'HostClaimRecord' },
  'hostclaim-system',
);

function claim(overrides: Partial<ApiObject['metadata']> = {}): ApiObject {
  return {
    apiVersion: 'tenancy.metal3.io/v1alpha1',
    kind: 'HostClaim',
    metadata: { name: 'web-0', namespace: 'tenant-a', labels: { app: 'web' }, annotations: { note: 'x' }, ...overrides },
    spec: { poweredOn: true },
  };
}

/** What kube-apiserver would hand back for a stored record. */
function stored(record: ApiObject, extra: Partial<ApiObject['metadata']> = {}): ApiObject {
  return { ...record, metadata: { ...record.metadata, uid: 'record-uid', resourceVersion: '42', generation: 1, ...extra } };
}

describe('backing names', () => {
  it('are readable when they fit and a digest otherwise, and the two forms never meet', () => {
    expect(backingName('tenant-a', 'web-0')).toBe('tenant-a.web-0');
    const long = 'a'.repeat(250);
    const digest = backingName('tenant-a', long);
    expect(digest).toMatch(/^h-[0-9a-f]{64}$/);
    expect(digest.length).toBeLessThanOrEqual(253);
    expect(digest).not.toContain('.');
    // Namespaces (DNS labels) have no dots, so the first dot splits a readable name uniquely.
    const readable = backingName('ns-1', 'b.c');
    expect([readable.slice(0, readable.indexOf('.')), readable.slice(readable.indexOf('.') + 1)]).toEqual(['ns-1', 'b.c']);
  });
});

describe('StorageMapping', () => {
  it('round-trips a claim and hides every bookkeeping detail', () => {
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'owner-uid' };
    const record = mapping.toBacking(claim({ ownerReferences: [owner], finalizers: ['example.com/keep'] }), 'tenant-a', {
      finalizers: ['infra.tenancy.metal3.io/release'],
      annotations: { 'binding.infra.tenancy.metal3.io/host': 'infra/host-0' },
    });
    expect(record.metadata).toMatchObject({
      name: 'tenant-a.web-0',
      namespace: 'hostclaim-system',
      labels: { app: 'web', [bookkeeping.namespaceLabel]: 'tenant-a' },
      finalizers: ['infra.tenancy.metal3.io/release', bookkeeping.tenantFinalizer],
    });
    // Owners and tenant finalizers never reach the record's metadata: the GC would act on them there.
    expect(record.metadata.ownerReferences).toBeUndefined();
    expect(record.apiVersion).toBe('infra.tenancy.metal3.io/v1alpha1');

    const virtual = mapping.toVirtual(stored(record));
    expect(virtual).toEqual({
      apiVersion: 'tenancy.metal3.io/v1alpha1',
      kind: 'HostClaim',
      metadata: {
        name: 'web-0',
        namespace: 'tenant-a',
        uid: virtualUid('record-uid'),
        resourceVersion: '42',
        generation: 1,
        labels: { app: 'web' },
        annotations: { note: 'x' },
        finalizers: ['example.com/keep'],
        ownerReferences: [owner],
      },
      spec: { poweredOn: true },
    });
    expect(mapping.internalState(stored(record))).toEqual({
      finalizers: ['infra.tenancy.metal3.io/release'],
      annotations: { 'binding.infra.tenancy.metal3.io/host': 'infra/host-0' },
    });
  });

  it('derives a stable virtual uid that differs from the record uid', () => {
    expect(virtualUid('record-uid')).toBe(virtualUid('record-uid'));
    expect(virtualUid('record-uid')).not.toBe(virtualUid('other-uid'));
    expect(virtualUid('record-uid')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The uid every release has served for this record (the API's): the derivation may get faster, never different.
    expect(virtualUid('record-uid')).toBe('f0ab12da-8101-5d03-8ede-b5e447ae27ac');
  });

  it('refuses records whose bookkeeping does not name them', () => {
    const record = stored(mapping.toBacking(claim(), 'tenant-a'));
    expect(mapping.toVirtual({ ...record, metadata: { ...record.metadata, name: 'tenant-b.web-0' } })).toBeUndefined();
    expect(mapping.toVirtual({ ...record, metadata: { ...record.metadata, labels: {} } })).toBeUndefined();
  });

  it('filters bookkeeping out of managedFields and renames their apiVersion', () => {
    const record = stored(mapping.toBacking(claim(), 'tenant-a'), {
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Update',
          apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, [`f:${bookkeeping.namespaceLabel}`]: {} } },
            'f:spec': { 'f:poweredOn': {} },
          },
        },
        {
          manager: 'only-bookkeeping',
          operation: 'Update',
          apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, [`f:${bookkeeping.nameAnnotation}`]: {} } } },
        },
      ],
    });
    expect(mapping.toVirtual(record)?.metadata.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Update',
        apiVersion: 'tenancy.metal3.io/v1alpha1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:poweredOn': {} } },
      },
    ]);
  });

  it('gives the views of records that share a field set one tenant field set, frozen like its source', () => {
    const entry = (): NonNullable<ApiObject['metadata']['managedFields']>[number] => ({
      manager: 'kubectl',
      operation: 'Update',
      apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, [`f:${bookkeeping.namespaceLabel}`]: {} } }, 'f:spec': { 'f:poweredOn': {} } },
    });
    const viewFieldSet = (name: string): Record<string, unknown> | undefined => {
      const record = shareFieldSets(stored(mapping.toBacking(claim({ name }), 'tenant-a'), { managedFields: [entry()] }));
      return mapping.toVirtual(record)?.metadata.managedFields?.[0]?.fieldsV1;
    };
    const first = viewFieldSet('web-0');
    const second = viewFieldSet('web-1');
    expect(first).toEqual({ 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:poweredOn': {} } });
    expect(second).toBe(first);
    expect(Object.isFrozen(first?.['f:metadata'])).toBe(true);
  });

  it('turns a last-applied-configuration written in record form back into the tenant form', () => {
    const lastApplied = JSON.stringify(mapping.toBacking(claim(), 'tenant-a'));
    const record = stored(mapping.toBacking(claim({ annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } }), 'tenant-a'));
    const annotation = mapping.toVirtual(record)?.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '';
    const parsed = JSON.parse(annotation) as ApiObject;
    expect(parsed.apiVersion).toBe('tenancy.metal3.io/v1alpha1');
    expect(parsed.kind).toBe('HostClaim');
    expect(parsed.metadata).toEqual({ name: 'web-0', namespace: 'tenant-a', labels: { app: 'web' }, annotations: { note: 'x' } });
    expect(annotation).not.toContain('infra.tenancy.metal3.io');
  });
});
