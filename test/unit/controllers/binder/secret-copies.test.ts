import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { copyIndex } from '../../../../src/controllers/binder/indexes.js';
import { copyIsCurrent, copyName, copyOwnerLabel, copySourceAnnotation, wantedCopyNames } from '../../../../src/controllers/binder/secret-copies.js';
import { claim } from './fixtures.js';

describe('wantedCopyNames', () => {
  it('names one copy per referenced Secret, after the record', () => {
    const referencing = claim({ spec: { userData: { name: 'ud' }, networkData: { name: 'nd' }, image: { url: 'http://i', ociAuthSecretName: 'oci' } } });
    expect([...wantedCopyNames(referencing)].sort()).toEqual(['tenant-a.web-0-networkdata', 'tenant-a.web-0-ociauth', 'tenant-a.web-0-userdata']);
  });

  it('names none for a claim without references', () => {
    expect(wantedCopyNames(claim({ spec: { poweredOn: true, userData: null } })).size).toBe(0);
  });

  it('uses the hashed name of a long record name, as the copies do', () => {
    const long = claim({ name: 'w'.repeat(240), spec: { metaData: { name: 'md' } } });
    expect([...wantedCopyNames(long)]).toEqual([copyName(long.identity.name, 'metadata')]);
  });
});

describe('copyIndex', () => {
  const secret = (labels: Record<string, string> | undefined): ApiObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: 'infra', name: 'tenant-a.web-0-userdata', ...(labels === undefined ? {} : { labels }) },
  });

  it("indexes a copy by its namespace and its owner record's uid", () => {
    expect(copyIndex.fn(secret({ [copyOwnerLabel]: 'record-uid', 'metal3.io/secret': 'true' }))).toEqual(['infra/record-uid']);
  });

  it('does not index other Secrets', () => {
    expect(copyIndex.fn(secret(undefined))).toEqual([]);
    expect(copyIndex.fn(secret({ app: 'x' }))).toEqual([]);
  });
});

describe('copyIsCurrent', () => {
  const source = { metadata: { name: 'ud', namespace: 'tenant-a', uid: 'src-uid', resourceVersion: '41' } };
  const copy = (annotation: string | undefined, owner = 'record-uid'): { metadata: { labels: Record<string, string>; annotations?: Record<string, string> } } => ({
    metadata: { labels: { [copyOwnerLabel]: owner }, ...(annotation === undefined ? {} : { annotations: { [copySourceAnnotation]: annotation } }) },
  });

  it("is current when the claim's copy was written from the cached version of the source", () => {
    expect(copyIsCurrent(copy('src-uid/41'), source, 'record-uid')).toBe(true);
  });

  it('is not when the source changed, was re-created, or is not cached', () => {
    expect(copyIsCurrent(copy('src-uid/40'), source, 'record-uid')).toBe(false);
    expect(copyIsCurrent(copy('old-uid/41'), source, 'record-uid')).toBe(false);
    expect(copyIsCurrent(copy('src-uid/41'), undefined, 'record-uid')).toBe(false);
  });

  it("is not for a copy without the annotation, another claim's copy, or no copy", () => {
    expect(copyIsCurrent(copy(undefined), source, 'record-uid')).toBe(false);
    expect(copyIsCurrent(copy('src-uid/41', 'other-uid'), source, 'record-uid')).toBe(false);
    expect(copyIsCurrent(undefined, source, 'record-uid')).toBe(false);
  });

  it('never matches a source without a resourceVersion', () => {
    expect(copyIsCurrent(copy('src-uid/'), { metadata: { uid: 'src-uid' } }, 'record-uid')).toBe(false);
  });
});
