import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { copyIndex } from '../../../../src/controllers/binder/indexes.js';
import { copyName, copyOwnerLabel, wantedCopyNames } from '../../../../src/controllers/binder/secret-copies.js';
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
