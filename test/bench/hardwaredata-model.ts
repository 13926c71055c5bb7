/**
 * Memory and time of the HardwareData model at the scale (issue #12,
 * item 3): N tenant namespaces, H hosts with a realistic `status.hardware`,
 * one policy admitting every namespace. Prints the JavaScript heap the
 * model holds (inputs included) and the time of a tenant's list, a GET and
 * a 500-object page of the cluster-wide list. Not a test: figures depend
 * on the machine.
 *
 *   npx tsx --expose-gc test/bench/hardwaredata-model.ts [namespaces=1000] [hosts=10000]
 */
import { loadSchemaSource } from '../../src/api/openapi/schema-source.js';
import type { BareMetalHost, Namespace } from '../../src/metal3/types.js';
import { HardwareDataModel } from '../../src/resources/hardwaredata/model.js';

const namespaces = Number(process.argv[2] ?? 1000);
const hostCount = Number(process.argv[3] ?? 10000);

function hardware(i: number): Record<string, unknown> {
  return {
    systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R650', serialNumber: `SN${i}` },
    firmware: { bios: { vendor: 'Dell', version: '1.2.3', date: '2025-01-01' } },
    ramMebibytes: 262144,
    cpu: { arch: 'x86_64', model: 'Intel Xeon Gold 6338', clockMegahertz: 2000, count: 128, flags: Array.from({ length: 40 }, (_, f) => `flag${f}`) },
    nics: Array.from({ length: 4 }, (_, n) => ({ name: `eno${n}`, mac: `00:11:22:33:${(i % 256).toString(16).padStart(2, '0')}:${n}0`, ip: `192.0.2.${n}`, speedGbps: 25, pxe: n === 0, model: 'Broadcom' })),
    storage: Array.from({ length: 4 }, (_, d) => ({ name: `/dev/sd${'abcd'[d] ?? 'a'}`, type: 'SSD', sizeBytes: 960197124096, rotational: false, serialNumber: `D${i}-${d}`, vendor: 'ATA', model: 'SSD 960' })),
    hostname: `node-${i}`,
  };
}

const heap = (): number => {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
};

const before = heap();
const model = new HardwareDataModel(loadSchemaSource().resolvedObjectSchema('HardwareDataSpec'));
const tenants: Namespace[] = Array.from({ length: namespaces }, (_, i) => ({ metadata: { name: `tenant-${i}`, resourceVersion: String(10 + i) } }));
model.visibility.replaceNamespaces(tenants);
model.visibility.replacePolicies([{ metadata: { namespace: 'infra', name: 'everyone', resourceVersion: '5' }, spec: { hostClaimNamespaces: {} } }]);
const hosts: BareMetalHost[] = Array.from({ length: hostCount }, (_, i) => ({
  metadata: { namespace: 'infra', name: `node-${i}`, uid: `uid-${i}`, resourceVersion: String(100_000 + i), labels: { role: 'worker' } },
  spec: { online: false, bootMACAddress: '00:11:22:33:44:55' },
  status: { hardware: hardware(i), provisioning: { state: 'available' } },
}));
model.replaceHosts(hosts);
const loaded = heap();

let t = performance.now();
const listed = model.list('tenant-7');
const listMs = performance.now() - t;
const afterList = heap();
t = performance.now();
model.get('tenant-7', 'infra.node-42');
const getMs = performance.now() - t;
t = performance.now();
const page: unknown[] = [];
for (const object of model.listFrom({ namespace: 'tenant-500', name: 'infra.node-9000' })) {
  page.push(object);
  if (page.length === 500) break;
}
const pageMs = performance.now() - t;
t = performance.now();
const serialized = JSON.stringify({ items: listed }).length;
const serializeMs = performance.now() - t;

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
console.log(`${namespaces} namespaces × ${hostCount} hosts visible to each (${namespaces * hostCount} HardwareData objects)`);
console.log(`model heap (inputs included): ${mb(loaded - before)} MB; after one tenant list and its pruned inventories: ${mb(afterList - before)} MB`);
console.log(`tenant list of ${listed.length}: ${listMs.toFixed(0)} ms (JSON ${mb(serialized)} MB in ${serializeMs.toFixed(0)} ms); GET: ${getMs.toFixed(2)} ms; cluster-wide page of ${page.length}: ${pageMs.toFixed(0)} ms`);
t = performance.now();
const again = model.list('tenant-8');
console.log(`another tenant's list of ${again.length} (inventories already pruned): ${(performance.now() - t).toFixed(0)} ms`);
