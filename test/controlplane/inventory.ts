// The `make dev` / `make up` inventory and test hosts with distinct,
// realistic hardware. When inspection is disabled (`spec.inspectionMode:
// disabled`, BareMetalHost.InspectionDisabled), baremetal-operator v0.13.2
// copies a host's hardware details to `status.hardware` from the
// metal3.io HardwareData of the same name if one exists, else from the
// `inspect.metal3.io/hardwaredetails` annotation
// (baremetalhost_controller.go updateHardwareDetails). createBareMetalHost
// pre-creates that HardwareData, as an inspection would have (so
// `kubectl get hardwaredata.metal3.io` lists every host as before). Without
// this every fixture host reports the fixture's one inspection result.

/** BMO's HardwareDetails (apis/metal3.io/v1alpha1/hardwaredata_types.go), the fields used here. */
export interface HardwareDetails {
  systemVendor: { manufacturer: string; productName: string; serialNumber: string };
  firmware: { bios: { vendor: string; version: string; date: string } };
  ramMebibytes: number;
  cpu: { arch: string; model: string; clockMegahertz: number; count: number; flags: string[] };
  nics: { name: string; model: string; mac: string; ip?: string; speedGbps: number; pxe?: boolean; lldp?: { switchID: string; portID: string; switchSystemName: string } }[];
  storage: { name: string; type: 'HDD' | 'SSD' | 'NVME'; sizeBytes: number; rotational?: boolean; model: string; serialNumber: string }[];
  hostname: string;
}

export interface InventoryHost {
  name: string;
  labels: Record<string, string>;
  bootMACAddress: string;
  hardware: HardwareDetails;
}

const GB = 1_000_000_000;

/**
 * host-0..host-2 of the dev environment: two gold Dell servers that differ
 * in CPU, RAM and disks, and a silver HPE server with spinning disks. Labels
 * `role: worker`, `tier`, and `disk` (what an admin labels for tenants to
 * select on: a HostClaim's hostSelector matches host labels, not hardware
 * details). The boot MAC is the PXE NIC's MAC, as on real hosts.
 */
export const sampleInventory: readonly InventoryHost[] = [
  {
    name: 'host-0',
    labels: { role: 'worker', tier: 'gold', disk: 'nvme' },
    bootMACAddress: '52:54:00:0a:00:10',
    hardware: {
      systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R650', serialNumber: 'DL650A0' },
      firmware: { bios: { vendor: 'Dell Inc.', version: '1.13.2', date: '2024-03-11' } },
      ramMebibytes: 262_144,
      cpu: { arch: 'x86_64', model: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz', clockMegahertz: 2000, count: 64, flags: ['avx2', 'avx512f', 'vmx'] },
      nics: [
        { name: 'eno1', model: '0x8086 0x1593', mac: '52:54:00:0a:00:10', ip: '192.0.2.10', speedGbps: 25, pxe: true },
        { name: 'eno2', model: '0x8086 0x1593', mac: '52:54:00:0a:00:11', ip: '198.51.100.10', speedGbps: 25 },
      ],
      storage: [
        { name: '/dev/nvme0n1', type: 'NVME', sizeBytes: 1600 * GB, model: 'Dell Ent NVMe P5600', serialNumber: 'NV0A01' },
        { name: '/dev/nvme1n1', type: 'NVME', sizeBytes: 1600 * GB, model: 'Dell Ent NVMe P5600', serialNumber: 'NV0A02' },
      ],
      hostname: 'host-0.lab.example',
    },
  },
  {
    name: 'host-1',
    labels: { role: 'worker', tier: 'gold', disk: 'ssd' },
    bootMACAddress: '52:54:00:0a:01:10',
    hardware: {
      systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R750', serialNumber: 'DL750B1' },
      firmware: { bios: { vendor: 'Dell Inc.', version: '1.10.2', date: '2023-11-02' } },
      ramMebibytes: 524_288,
      cpu: { arch: 'x86_64', model: 'Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz', clockMegahertz: 2600, count: 128, flags: ['avx2', 'avx512f', 'vmx'] },
      nics: [
        { name: 'ens1f0', model: '0x15b3 0x101d', mac: '52:54:00:0a:01:10', ip: '192.0.2.11', speedGbps: 100, pxe: true },
        { name: 'ens1f1', model: '0x15b3 0x101d', mac: '52:54:00:0a:01:11', ip: '198.51.100.11', speedGbps: 100 },
      ],
      storage: [
        { name: '/dev/sda', type: 'SSD', sizeBytes: 480 * GB, model: 'MZ7L3480HCHQ', serialNumber: 'SS1B01' },
        { name: '/dev/sdb', type: 'SSD', sizeBytes: 3840 * GB, model: 'MZ7L33T8HBLT', serialNumber: 'SS1B02' },
      ],
      hostname: 'host-1.lab.example',
    },
  },
  {
    name: 'host-2',
    labels: { role: 'worker', tier: 'silver', disk: 'hdd' },
    bootMACAddress: '52:54:00:0a:02:10',
    hardware: {
      systemVendor: { manufacturer: 'HPE', productName: 'ProLiant DL380 Gen10', serialNumber: 'HP380C2' },
      firmware: { bios: { vendor: 'HPE', version: 'U30', date: '2022-08-19' } },
      ramMebibytes: 131_072,
      cpu: { arch: 'x86_64', model: 'Intel(R) Xeon(R) Silver 4214 CPU @ 2.20GHz', clockMegahertz: 2200, count: 24, flags: ['avx2', 'vmx'] },
      nics: [
        { name: 'eno1', model: '0x14e4 0x165f', mac: '52:54:00:0a:02:10', ip: '192.0.2.12', speedGbps: 1, pxe: true },
        { name: 'ens2f0', model: '0x8086 0x10fb', mac: '52:54:00:0a:02:11', ip: '198.51.100.12', speedGbps: 10 },
        { name: 'ens2f1', model: '0x8086 0x10fb', mac: '52:54:00:0a:02:12', speedGbps: 10 },
      ],
      storage: [
        { name: '/dev/sda', type: 'SSD', sizeBytes: 240 * GB, model: 'VK000240GWSRQ', serialNumber: 'SS2C01' },
        { name: '/dev/sdb', type: 'HDD', sizeBytes: 8000 * GB, rotational: true, model: 'MB008000JWJRQ', serialNumber: 'HD2C02' },
        { name: '/dev/sdc', type: 'HDD', sizeBytes: 8000 * GB, rotational: true, model: 'MB008000JWJRQ', serialNumber: 'HD2C03' },
      ],
      hostname: 'host-2.lab.example',
    },
  },
];

/**
 * A test host `index` with hardware of its own: MACs 52:54:00:0b:<index>:1x,
 * IPs 203.0.113.<index>, hostname `<name>.test.example`, CPU count and RAM
 * growing with the index. For tests that need many distinguishable hosts.
 */
export function testHost(name: string, index: number, labels: Record<string, string>): InventoryHost {
  if (!Number.isInteger(index) || index < 0 || index > 250) throw new Error(`test host index ${index} is out of range`);
  const octet = index.toString(16).padStart(2, '0');
  const bootMACAddress = `52:54:00:0b:${octet}:10`;
  return {
    name,
    labels,
    bootMACAddress,
    hardware: {
      systemVendor: { manufacturer: 'Supermicro', productName: 'SYS-1029P', serialNumber: `SM${index.toString().padStart(4, '0')}` },
      firmware: { bios: { vendor: 'American Megatrends Inc.', version: '3.4', date: '2021-05-20' } },
      ramMebibytes: 65_536 * (1 + (index % 4)),
      cpu: { arch: 'x86_64', model: 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz', clockMegahertz: 2100, count: 16 * (1 + (index % 3)), flags: ['avx2', 'vmx'] },
      nics: [
        { name: 'eno1', model: '0x8086 0x1572', mac: bootMACAddress, ip: `203.0.113.${index + 1}`, speedGbps: 10, pxe: true },
        { name: 'eno2', model: '0x8086 0x1572', mac: `52:54:00:0b:${octet}:11`, speedGbps: 10 },
      ],
      storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 960 * GB, model: 'SAMSUNG MZ7LH960', serialNumber: `TS${index.toString().padStart(4, '0')}` }],
      hostname: `${name}.test.example`,
    },
  };
}
