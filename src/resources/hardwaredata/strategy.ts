/** What is specific to HardwareData in the generic REST layer: the table columns and the admin projection (it is read-only). */
import type { ResourceStrategy } from '../../api/rest/contracts.js';
import type { Authorizer } from '../../auth/authorizer.js';
import { infrastructureAdminAccess } from '../../tenancy/infrastructure-admin.js';
import { hardwareDataProjection } from './admin-projection.js';
import type { TableColumn } from '../../api/rest/representation.js';
import type { ApiObject } from '../../api/rest/types.js';
import { hardwareDataResource } from './descriptor.js';

export function hardwareDataStrategy(authorizer: Authorizer): ResourceStrategy {
  return {
    descriptor: hardwareDataResource,
    columns: hardwareDataColumns(),
    projection: hardwareDataProjection(infrastructureAdminAccess(authorizer)),
  };
}

type Fields = Record<string, unknown>;

function hardwareOf(o: ApiObject): Fields {
  return (((o['spec'] ?? {}) as Fields)['hardware'] ?? {}) as Fields;
}

function section(o: ApiObject, name: string): Fields {
  return (hardwareOf(o)[name] ?? {}) as Fields;
}

function count(value: unknown): number | undefined {
  return Array.isArray(value) ? value.length : undefined;
}

/** Memory as a kube quantity: whole gibibytes as Gi, anything else in Mi. */
function memory(mebibytes: unknown): string | undefined {
  if (typeof mebibytes !== 'number') return undefined;
  return mebibytes % 1024 === 0 ? `${mebibytes / 1024}Gi` : `${mebibytes}Mi`;
}

function hardwareDataColumns(): TableColumn[] {
  return [
    { name: 'Manufacturer', type: 'string', description: 'System manufacturer.', priority: 0, value: (o) => section(o, 'systemVendor')['manufacturer'] },
    { name: 'Product', type: 'string', description: 'Product or model name.', priority: 0, value: (o) => section(o, 'systemVendor')['productName'] },
    { name: 'Arch', type: 'string', description: 'CPU architecture.', priority: 0, value: (o) => section(o, 'cpu')['arch'] },
    { name: 'CPUs', type: 'integer', description: 'Number of logical CPUs.', priority: 0, value: (o) => section(o, 'cpu')['count'] },
    { name: 'Memory', type: 'string', description: 'Memory size.', priority: 0, value: (o) => memory(hardwareOf(o)['ramMebibytes']) },
    { name: 'CPU Model', type: 'string', description: 'Processor model name.', priority: 1, value: (o) => section(o, 'cpu')['model'] },
    { name: 'NICs', type: 'integer', description: 'Number of network interfaces.', priority: 1, value: (o) => count(hardwareOf(o)['nics']) },
    { name: 'Disks', type: 'integer', description: 'Number of block devices.', priority: 1, value: (o) => count(hardwareOf(o)['storage']) },
  ];
}
