import { describe, expect, it } from 'vitest';
import { translateBackingError } from '../../../src/backing/errors.js';
import { KubeApiError } from '../../../src/backing/kube-client.js';
import { hostClaimStorageMapping } from '../../../src/resources/hostclaim/storage.js';

const mapping = hostClaimStorageMapping('hostclaim-system');
const target = { gr: { group: 'tenancy.metal3.io', resource: 'hostclaims' }, backingPlural: 'hostclaimrecords', namespace: 'tenant-a', name: 'web-0', backingName: 'tenant-a.web-0' };

describe('translateBackingError', () => {
  it("passes kube's too-large resourceVersion answer through as kube gives it for the object: 504 Timeout, cause, retry-after, no names", () => {
    const tooLarge = new KubeApiError(504, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'Timeout: Too large resource version: 999999, current: 1234',
      reason: 'Timeout',
      code: 504,
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    } as ConstructorParameters<typeof KubeApiError>[1]);
    const error = translateBackingError(tooLarge, mapping, target);
    expect(error.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: Too large resource version: 999999, current: 1234',
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      code: 504,
    });
  });
});
