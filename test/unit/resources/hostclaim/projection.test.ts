import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import { controllerAnnotationsOf } from '../../../../src/backing/storage-mapping.js';
import { hostClaimProjection } from '../../../../src/resources/hostclaim/projection.js';
import { hostClaimStorageMapping, hostErrorAnnotation } from '../../../../src/resources/hostclaim/storage.js';

const mapping = hostClaimStorageMapping('hostclaim-system');
const sanitized = 'The host could not be registered with its management controller. The infrastructure administrator can see the details.';
const hostError = "Unknown BMC type 'bogus' for address <BMC address>";

function record(annotations: Record<string, string>, reason = 'HostError'): ApiObject {
  return {
    apiVersion: 'infra.tenancy.metal3.io/v1alpha1',
    kind: 'HostClaimRecord',
    metadata: {
      name: 'tenant-a.web-0',
      namespace: 'hostclaim-system',
      uid: 'record-uid',
      resourceVersion: '9',
      labels: { 'infra.tenancy.metal3.io/namespace': 'tenant-a' },
      annotations: { 'infra.tenancy.metal3.io/name': 'web-0', note: 'tenant', ...annotations },
    },
    spec: { poweredOn: false },
    status: {
      bareMetalHost: { namespace: 'infra', name: 'node-0' },
      conditions: [
        { type: 'Associated', status: 'True', reason: 'BareMetalHostAssociated', message: 'The claim is bound to a host.' },
        { type: 'Provisioned', status: 'False', reason, message: sanitized },
      ],
    },
  };
}

function virtual(annotations: Record<string, string>, reason?: string): ApiObject {
  const object = mapping.toVirtual(record(annotations, reason));
  if (object === undefined) throw new Error('not a claim');
  return object;
}

const projection = hostClaimProjection(() => Promise.resolve(true));

describe('the HostClaim projection', () => {
  it('keeps the host error beside the virtual claim, never in it', () => {
    const claim = virtual({ [hostErrorAnnotation]: hostError });
    expect(claim.metadata.annotations).toEqual({ note: 'tenant' });
    expect(JSON.stringify(claim)).not.toContain('Unknown BMC type');
    expect(controllerAnnotationsOf(claim)).toEqual({ [hostErrorAnnotation]: hostError });
    // A copy has none: it shows the tenant form.
    expect(controllerAnnotationsOf({ ...claim })).toEqual({});
  });

  it('shows infrastructure admins the host error as the Provisioned message, and nothing else differs', () => {
    const claim = virtual({ [hostErrorAnnotation]: hostError });
    expect(projection.infrastructureNamespace(claim)).toBe('infra');
    const admin = projection.forInfrastructureAdmin(claim);
    expect(admin).toEqual({
      ...claim,
      status: {
        bareMetalHost: { namespace: 'infra', name: 'node-0' },
        conditions: [
          { type: 'Associated', status: 'True', reason: 'BareMetalHostAssociated', message: 'The claim is bound to a host.' },
          { type: 'Provisioned', status: 'False', reason: 'HostError', message: hostError },
        ],
      },
    });
    expect(projection.forInfrastructureAdmin(claim)).toBe(admin);
    // The stored (tenant) form is untouched.
    expect((claim['status'] as { conditions: { message: string }[] }).conditions[1]?.message).toBe(sanitized);
  });

  it('has nothing more to show without a recorded error text or a host-error condition', () => {
    for (const claim of [virtual({}), virtual({ [hostErrorAnnotation]: hostError }, 'Provisioning'), virtual({ [hostErrorAnnotation]: '' })]) {
      expect(projection.infrastructureNamespace(claim)).toBeUndefined();
      expect(projection.forInfrastructureAdmin(claim)).toBe(claim);
    }
  });
});
