import { describe, expect, it } from 'vitest';
import { dependencyFailure, translateBackingError } from '../../../src/backing/errors.js';
import { KubeApiError, KubeUnavailableError } from '../../../src/backing/kube-client.js';
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

describe('dependencyFailure: kube-apiserver could not serve a call made for the request', () => {
  const refused = new KubeUnavailableError(false, { cause: new Error('connect ECONNREFUSED 127.0.0.1:6443') });
  const silent = new KubeUnavailableError(true, { cause: new Error('no answer within 30000 ms') });
  const status = (code: number, reason: string, message: string): KubeApiError =>
    new KubeApiError(code, { kind: 'Status', code, reason, message });

  it('answers 503 ServiceUnavailable with Retry-After when kube-apiserver cannot be reached, naming no address', () => {
    const error = dependencyFailure(refused, 'authorization');
    expect(error?.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server is currently unable to handle the request: authorization is unavailable; please try again',
      reason: 'ServiceUnavailable',
      details: { retryAfterSeconds: 1 },
      code: 503,
    });
    expect(error?.cause).toBe(refused);
  });

  it('answers 504 Timeout with Retry-After when kube-apiserver did not answer in time (a write may have happened)', () => {
    expect(dependencyFailure(silent, 'storage')?.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: storage did not answer within the allotted time; please try again',
      reason: 'Timeout',
      details: { retryAfterSeconds: 1 },
      code: 504,
    });
  });

  it.each([
    ['its own 503', new KubeApiError(503, undefined), 503],
    ['its own 504', status(504, 'Timeout', 'Timeout: request did not complete within the allotted timeout'), 504],
    ['a 404 that is not a Status (a path not served yet while it starts)', new KubeApiError(404, undefined), 503],
    ['a refusal of the server itself (its RBAC not loaded yet)', status(403, 'Forbidden', 'subjectaccessreviews.authorization.k8s.io is forbidden: User "system:serviceaccount:x:y" cannot create'), 503],
    ['an authentication failure of the server itself', status(401, 'Unauthorized', 'Unauthorized'), 503],
  ])('answers %s with a retriable code', (_label, error, code) => {
    const failure = dependencyFailure(error, 'storage');
    expect(failure?.code).toBe(code);
    expect(failure?.details?.retryAfterSeconds).toBe(1);
  });

  it.each([
    ['a NotFound Status', status(404, 'NotFound', 'hostclaimrecords.infra.tenancy.metal3.io "a" not found')],
    ['a conflict', status(409, 'Conflict', 'the object has been modified')],
    ['an invalid object', status(422, 'Invalid', 'is invalid')],
    ['kube-apiserver failing on bad input', status(500, 'InternalError', 'failed to create typed patch object')],
    ['a bug of ours', new Error('x is not a function')],
  ])('leaves %s to the caller', (_label, error) => {
    expect(dependencyFailure(error, 'storage')).toBeUndefined();
  });

  it('is what translateBackingError gives for unreachable storage, a NotFound Status stays the virtual object\'s 404', () => {
    expect(translateBackingError(refused, mapping, target).code).toBe(503);
    expect(translateBackingError(new KubeApiError(404, undefined), mapping, target).code).toBe(503);
    expect(translateBackingError(status(404, 'NotFound', 'hostclaimrecords.infra.tenancy.metal3.io "tenant-a.web-0" not found'), mapping, target).toStatus()).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'hostclaims.tenancy.metal3.io "web-0" not found',
    });
  });
});
