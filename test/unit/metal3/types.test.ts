import { describe, expect, it } from 'vitest';
import { metal3Resources, type BareMetalHost } from '../../../src/metal3/types.js';

function host(annotations?: Record<string, string>): BareMetalHost {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name: 'h1',
      namespace: 'infra',
      resourceVersion: '42',
      labels: { rack: 'r1' },
      ...(annotations === undefined ? {} : { annotations }),
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'metal3.io/v1alpha1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    },
    spec: { online: true, bmc: { address: 'ipmi://192.0.2.1', credentialsName: 'h1-bmc' } },
    status: { hardware: { hostname: 'h1' } },
  };
}

describe('metal3Resources: what the shared caches keep', () => {
  it('keeps a host without managedFields and without the annotations that copy it, leaving the listed object alone', () => {
    const listed = host({
      'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{"bmc":{"address":"ipmi://192.0.2.1"}}}',
      'baremetalhost.metal3.io/status': '{"hardware":{}}',
      'example.com/owner': 'team-a',
    });
    const before = structuredClone(listed);
    const { managedFields: _managedFields, ...metadata } = listed.metadata;
    expect(metal3Resources.bareMetalHosts.transform(listed)).toEqual({ ...listed, metadata: { ...metadata, annotations: { 'example.com/owner': 'team-a' } } });
    expect(listed).toEqual(before);
  });

  it('keeps a host without annotations as it is, but for managedFields', () => {
    const listed = host();
    const { managedFields: _managedFields, ...metadata } = listed.metadata;
    expect(metal3Resources.bareMetalHosts.transform(listed)).toEqual({ ...listed, metadata });
  });

  it('keeps policies and namespaces without managedFields', () => {
    const namespace = { metadata: { name: 'tenant-a', resourceVersion: '7', labels: { team: 'a' }, managedFields: [{ manager: 'kubectl' }] } };
    expect(metal3Resources.namespaces.transform(namespace)).toEqual({ metadata: { name: 'tenant-a', resourceVersion: '7', labels: { team: 'a' } } });
    expect(metal3Resources.hostDeployPolicies.transform(namespace)).toEqual({ metadata: { name: 'tenant-a', resourceVersion: '7', labels: { team: 'a' } } });
  });
});
