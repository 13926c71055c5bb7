import { describe, expect, it } from 'vitest';
import { applyRefusal } from '../../../src/backing/errors.js';
import { KubeApiError } from '../../../src/backing/kube-client.js';
import { hostClaimStorageMapping } from '../../../src/resources/hostclaim/storage.js';

const mapping = hostClaimStorageMapping('hostclaim-system');
const target = { gr: { group: 'tenancy.metal3.io', resource: 'hostclaims' }, backingPlural: 'hostclaimrecords', namespace: 'tenant-a', name: 'web-0', backingName: 'tenant-a.web-0' };
const kube500 = (message: string) =>
  new KubeApiError(500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code: 500 } as ConstructorParameters<typeof KubeApiError>[1]);

describe('applyRefusal: the field manager’s 500 for an untypable apply configuration', () => {
  it('is the 400 kube should give, worded for the virtual object', () => {
    const error = applyRefusal(
      kube500('failed to create typed patch object (hostclaim-system/tenant-a.web-0; infra.tenancy.metal3.io/v1alpha1, Kind=HostClaimRecord): .spec.unknownField: field not declared in schema'),
      mapping,
      target,
      '',
    );
    expect(error?.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'failed to create typed patch object (/web-0; tenancy.metal3.io/v1alpha1, Kind=HostClaim): .spec.unknownField: field not declared in schema',
      reason: 'BadRequest',
      code: 400,
    });
  });

  it('leaves every other error to the generic translation', () => {
    expect(applyRefusal(kube500('etcdserver: request timed out'), mapping, target, '')).toBeUndefined();
    expect(applyRefusal(new Error('failed to create typed patch object (x): y'), mapping, target, '')).toBeUndefined();
  });
});
