import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeCollectionVersions, decodeStatus } from '../../../src/backing/metadata-protobuf.js';

/** Answers of kube-apiserver v1.37.2 to `Accept: application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`, captured. */
const fixture = (name: string): Buffer => readFileSync(new URL(`fixtures/${name}`, import.meta.url));

describe('decodeCollectionVersions', () => {
  it('reads the list resourceVersion and each object\'s namespace, name and resourceVersion, skipping managedFields and labels (two BareMetalHosts, limit=2)', () => {
    // The same list asked for in JSON named the same objects at the same versions.
    expect(decodeCollectionVersions(fixture('bmh-metadata-list.pb'))).toEqual({
      resourceVersion: '69678',
      items: [
        { namespace: 'bench-infra-00', name: 'host-00000', resourceVersion: '538' },
        { namespace: 'bench-infra-00', name: 'host-00001', resourceVersion: '543' },
      ],
    });
  });

  it('gives a cluster-scoped object the empty namespace (Namespaces)', () => {
    expect(decodeCollectionVersions(fixture('namespaces-metadata-list.pb')).items).toEqual([
      { namespace: '', name: 'bench-infra-00', resourceVersion: '313' },
      { namespace: '', name: 'bench-t-0000', resourceVersion: '310' },
      { namespace: '', name: 'bench-t-0001', resourceVersion: '312' },
    ]);
  });

  it('refuses bytes that are not kube\'s protobuf, and an envelope of another kind', () => {
    expect(() => decodeCollectionVersions(Buffer.from('{"items":[]}'))).toThrow('not a Kubernetes protobuf answer');
    expect(() => decodeCollectionVersions(fixture('status-404.pb'))).toThrow('expected a PartialObjectMetadataList, got "Status"');
  });
});

describe('decodeStatus', () => {
  it('reads the Status of an error answer in protobuf', () => {
    expect(decodeStatus(fixture('status-404.pb'))).toEqual({ kind: 'Status', status: 'Failure', message: 'namespaces "nowhere" not found', reason: 'NotFound', code: 404 });
  });

  it('is undefined for anything else', () => {
    expect(decodeStatus(fixture('bmh-metadata-list.pb'))).toBeUndefined();
    expect(decodeStatus(Buffer.from('{"kind":"Status"}'))).toBeUndefined();
    expect(decodeStatus(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0xff, 0xff]))).toBeUndefined();
  });
});
