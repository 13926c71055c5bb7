import { describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../../../src/metal3/types.js';
import { sharedSections, withheld } from '../../../../src/resources/hardwaredata/inventory.js';
import { hardwareData, tenantView } from '../../../../src/resources/hardwaredata/projection.js';
import { sharedInventoryAnnotation } from '../../../../src/tenancy/policy.js';

const specSchema = loadSchemaSource().resolvedObjectSchema('HardwareDataSpec');

const inventory = {
  systemVendor: { manufacturer: 'Dell', productName: 'R650', serialNumber: 'SN-CHASSIS' },
  firmware: { bios: { vendor: 'Dell', version: '1.2.3', date: '2025-01-01' } },
  cpu: { arch: 'x86_64', count: 32, model: 'Xeon' },
  ramMebibytes: 65536,
  nics: [
    { name: 'eno1', mac: '00:11:22:33:44:55', ip: '192.0.2.10', speedGbps: 25, pxe: true, lldp: { switchID: 'sw-1', portID: 'Ethernet1/7', switchSystemName: 'tor-1' } },
    { name: 'eno2', mac: '00:11:22:33:44:56' },
  ],
  storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 960_000_000_000, model: 'PM883', serialNumber: 'SN-DISK', wwn: '0x5002538e', wwnWithExtension: '0x5002538e01', wwnVendorExtension: '0x01' }],
  hostname: 'node-1',
};

/** What a tenant sees by default: everything but the LLDP data, serial numbers and WWNs, and the firmware. */
const tenantDefault = {
  systemVendor: { manufacturer: 'Dell', productName: 'R650' },
  cpu: { arch: 'x86_64', count: 32, model: 'Xeon' },
  ramMebibytes: 65536,
  nics: [
    { name: 'eno1', mac: '00:11:22:33:44:55', ip: '192.0.2.10', speedGbps: 25, pxe: true },
    { name: 'eno2', mac: '00:11:22:33:44:56' },
  ],
  storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 960_000_000_000, model: 'PM883' }],
  hostname: 'node-1',
};

function host(): BareMetalHost {
  return {
    metadata: { name: 'node-1', namespace: 'infra', uid: 'uid-1', resourceVersion: '5' },
    spec: { bmc: { address: 'redfish://10.0.0.1', credentialsName: 'node-1-bmc-secret' } },
    status: { hardware: inventory },
  };
}

function policy(names: string[], shared?: string): HostDeployPolicy {
  return {
    metadata: { name: `p-${names.join('-')}`, namespace: 'infra', ...(shared === undefined ? {} : { annotations: { [sharedInventoryAnnotation]: shared } }) },
    spec: { hostClaimNamespaces: { names } },
  };
}

const tenantA: Namespace = { metadata: { name: 'tenant-a' } };

function hardwareFor(policies: HostDeployPolicy[]): unknown {
  return hardwareData(host(), tenantView(tenantA, policies, new Map()), specSchema)?.['spec'];
}

describe('the inventory tenants see', () => {
  it('by default: what a consumer such as CAPM3 needs, without LLDP data, serial numbers, WWNs or firmware', () => {
    expect(hardwareFor([policy(['tenant-a'])])).toEqual({ hardware: tenantDefault });
  });

  it('with the sections an admitting policy shares', () => {
    expect(hardwareFor([policy(['tenant-a'], 'lldp, serialNumbers')])).toEqual({
      hardware: { ...tenantDefault, systemVendor: inventory.systemVendor, nics: inventory.nics, storage: inventory.storage },
    });
    expect(hardwareFor([policy(['tenant-a'], 'firmware')])).toEqual({ hardware: { ...tenantDefault, firmware: inventory.firmware } });
  });

  it('never from a policy that does not admit the tenant', () => {
    expect(hardwareFor([policy(['tenant-a']), policy(['tenant-b'], 'lldp,serialNumbers,firmware')])).toEqual({ hardware: tenantDefault });
  });

  it('reads the section names exactly, ignoring unknown ones', () => {
    expect(sharedSections([policy(['x'], 'LLDP,serial,firmware,,bmc'), policy(['y'], ' lldp ')])).toEqual(['lldp', 'firmware']);
    expect(sharedSections([])).toEqual([]);
  });

  it('leaves the input untouched and keeps absent sections absent', () => {
    const spec = { hardware: { ramMebibytes: 1024 } };
    expect(withheld(spec, [])).toEqual({ hardware: { ramMebibytes: 1024 } });
    const full = { hardware: structuredClone(inventory) };
    withheld(full, []);
    expect(full).toEqual({ hardware: inventory });
    expect(withheld({}, [])).toEqual({});
  });

  it('shares with its input the parts it withholds nothing from', () => {
    const nics = [{ name: 'eno1', mac: '02:00:00:00:00:01' }];
    const disk = { name: '/dev/sda', sizeBytes: 1, serialNumber: 'S1' };
    const spec = { hardware: { nics, storage: [disk], ramMebibytes: 1024 } };
    const hardware = withheld(spec, [])['hardware'] as Record<string, unknown>;
    expect(hardware).toEqual({ nics, storage: [{ name: '/dev/sda', sizeBytes: 1 }], ramMebibytes: 1024 });
    expect(hardware['nics']).toBe(nics);
    expect(((withheld(spec, ['serialNumbers'])['hardware'] as Record<string, unknown>)['storage'] as unknown[])[0]).toBe(disk);
  });
});

