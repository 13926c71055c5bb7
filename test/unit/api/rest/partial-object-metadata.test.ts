import { describe, expect, it } from 'vitest';

import { toPartialObjectMetadata, toPartialObjectMetadataList } from '../../../../src/api/rest/partial-object-metadata.js';
import { claim } from './output-fixtures.js';

describe('PartialObjectMetadata', () => {
  it('keeps only ObjectMeta, re-encoded as kube does', () => {
    const object = claim('a', {
      generation: 0,
      labels: {},
      finalizers: [],
      annotations: { a: 'b' },
      creationTimestamp: '2020-01-01T00:00:00.123+02:00',
      deletionGracePeriodSeconds: 0,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'n', uid: 'u', controller: true }],
      managedFields: [{ manager: 'm', operation: 'Update', time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    });
    (object.metadata as Record<string, unknown>)['unknownField'] = 'dropped';
    expect(toPartialObjectMetadata(object, 'v1')).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: {
        name: 'a',
        namespace: 'team-a',
        uid: 'uid-a',
        resourceVersion: '42',
        creationTimestamp: '2019-12-31T22:00:00Z',
        deletionGracePeriodSeconds: 0,
        annotations: { a: 'b' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'n', uid: 'u', controller: true }],
        managedFields: [
          { manager: 'm', operation: 'Update', time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
        ],
      },
    });
  });

  it('drops a map or list with a wrongly typed member, as the unstructured accessors do', () => {
    const object = claim('a', {
      labels: { a: 1 } as unknown as Record<string, string>,
      managedFields: [{ manager: 'm', time: 'yesterday' }],
      deletionTimestamp: 'soon',
    });
    const metadata = toPartialObjectMetadata(object, 'v1').metadata;
    expect(metadata.labels).toBeUndefined();
    expect(metadata.managedFields).toBeUndefined();
    expect(metadata.deletionTimestamp).toBeUndefined();
  });

  it('builds a PartialObjectMetadataList whose items carry their own kind', () => {
    const list = toPartialObjectMetadataList([claim('a'), claim('b')], { resourceVersion: '99', continue: '' }, 'v1');
    expect(list).toEqual({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '99' },
      items: [
        {
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { name: 'a', namespace: 'team-a', uid: 'uid-a', resourceVersion: '42', creationTimestamp: '2026-08-01T11:55:00Z' },
        },
        {
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { name: 'b', namespace: 'team-a', uid: 'uid-b', resourceVersion: '42', creationTimestamp: '2026-08-01T11:55:00Z' },
        },
      ],
    });
  });

  it('encodes an empty list with items: null, like kube', () => {
    const list = toPartialObjectMetadataList([], { resourceVersion: '7' }, 'v1beta1');
    expect(JSON.stringify(list)).toBe(
      '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1beta1","metadata":{"resourceVersion":"7"},"items":null}',
    );
  });
});
