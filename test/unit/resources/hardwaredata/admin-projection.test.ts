import { describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../../../src/metal3/types.js';
import { hardwareDataProjection } from '../../../../src/resources/hardwaredata/admin-projection.js';
import { hardwareData, tenantView } from '../../../../src/resources/hardwaredata/projection.js';
import { sharedLabelsAnnotation } from '../../../../src/tenancy/policy.js';

const specSchema = loadSchemaSource().resolvedObjectSchema('HardwareDataSpec');
const projection = hardwareDataProjection(() => Promise.resolve(true));

const inventory = {
  systemVendor: { manufacturer: 'Dell', productName: 'R650', serialNumber: 'SN-1' },
  nics: [{ name: 'eno1', mac: '00:11:22:33:44:55', lldp: { switchID: 'sw-1', portID: 'Ethernet1/7' } }],
  hostname: 'node-1',
};

const host: BareMetalHost = {
  metadata: {
    name: 'node-1',
    namespace: 'infra',
    uid: 'uid-1',
    resourceVersion: '5',
    labels: { role: 'worker', 'example.com/rack': 'r7', 'cluster.x-k8s.io/cluster-name': 'prod' },
    annotations: {
      'example.com/asset-tag': 'AT-1001',
      'example.com/oob': 'console at 10.0.0.1',
      'example.com/creds': 'node-1-bmc-secret',
      'baremetalhost.metal3.io/status': '{"poweredOn":false}',
      'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{}}',
      'tenancy.metal3.io/boot-mac-address': 'ff:ff:ff:ff:ff:ff',
    },
  },
  spec: { bootMACAddress: '00:11:22:33:44:55', bmc: { address: 'redfish://10.0.0.1/redfish/v1/Systems/1', credentialsName: 'node-1-bmc-secret' } },
  status: { hardware: inventory },
};

const policies: HostDeployPolicy[] = [{ metadata: { name: 'p', namespace: 'infra', annotations: { [sharedLabelsAnnotation]: 'role' } }, spec: { hostClaimNamespaces: {} } }];
const tenantA: Namespace = { metadata: { name: 'tenant-a' } };

function tenantForm() {
  const object = hardwareData(host, tenantView(tenantA, policies, new Map()), specSchema, '5');
  if (object === undefined) throw new Error('not visible');
  return object;
}

describe('the HardwareData admin projection', () => {
  it('adds the host labels and annotations that quote nothing of the BMC, and the whole inventory', () => {
    const tenant = tenantForm();
    expect(tenant.metadata.labels).toEqual({ role: 'worker' });
    expect(projection.infrastructureNamespace(tenant)).toBe('infra');
    const admin = projection.forInfrastructureAdmin(tenant);
    expect(admin).toEqual({
      ...tenant,
      metadata: {
        ...tenant.metadata,
        labels: { 'cluster.x-k8s.io/cluster-name': 'prod', 'example.com/rack': 'r7', role: 'worker' },
        annotations: { 'example.com/asset-tag': 'AT-1001', 'tenancy.metal3.io/boot-mac-address': '00:11:22:33:44:55' },
      },
      spec: { hardware: inventory },
    });
    expect(Object.keys(admin.metadata.labels ?? {})).toEqual(['cluster.x-k8s.io/cluster-name', 'example.com/rack', 'role']);
    expect(projection.forInfrastructureAdmin(tenant)).toBe(admin);
    const text = JSON.stringify(admin);
    for (const secret of ['10.0.0.1', 'node-1-bmc-secret', 'last-applied', 'baremetalhost.metal3.io/status']) expect(text).not.toContain(secret);
  });

  it('has nothing more to show for an object it did not make (a copy shows the tenant form)', () => {
    const copy = { ...tenantForm() };
    expect(projection.infrastructureNamespace(copy)).toBeUndefined();
    expect(projection.forInfrastructureAdmin(copy)).toBe(copy);
  });
});
