import { describe, expect, it } from 'vitest';
import { Authorizer } from '../../../../src/auth/authorizer.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { hostClaimStrategy } from '../../../../src/resources/hostclaim/strategy.js';

// Validation never asks: the Secret access check is admission, tested in the integration suites.
const strategy = hostClaimStrategy(new Authorizer(() => Promise.resolve({ allowed: false, reason: '' })));
const claim = (spec: Record<string, unknown>): ApiObject => ({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', metadata: { name: 'c', namespace: 'tenant-a' }, spec: { poweredOn: false, ...spec } });
const subdomain =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('HostClaim Secret references (the binder reads them by name with its own identity)', () => {
  it('refuses names no Secret can have, in every field that names a Secret', () => {
    const errors = strategy.validate(
      claim({
        userData: { name: '../../tenant-b/secrets/x' },
        networkData: { name: '%2e%2e' },
        metaData: { name: 'a/b' },
        image: { url: 'oci://r/i', ociAuthSecretName: '.' },
      }),
      'tenant-a',
    );
    expect(errors).toEqual([
      { type: 'Invalid', field: 'spec.userData.name', value: '../../tenant-b/secrets/x', detail: subdomain },
      { type: 'Invalid', field: 'spec.networkData.name', value: '%2e%2e', detail: subdomain },
      { type: 'Invalid', field: 'spec.metaData.name', value: 'a/b', detail: subdomain },
      { type: 'Invalid', field: 'spec.image.ociAuthSecretName', value: '.', detail: subdomain },
    ]);
  });

  it('accepts Secret names, with or without dots', () => {
    expect(strategy.validate(claim({ userData: { name: 'user-data' }, metaData: { name: 'meta.data', namespace: 'tenant-a' } }), 'tenant-a')).toEqual([]);
  });
});
