/**
 * Which parts of a host's inventory tenants see. By default what a consumer
 * such as CAPM3 needs to place and address a machine: the maker and model,
 * CPU, RAM, NICs (names, MACs, IPs, speeds, VLANs, PXE), disks (names,
 * sizes, types, models) and the hostname. Withheld unless a HostDeployPolicy
 * admitting the tenant shares them (annotation `tenancy.metal3.io/shared-inventory`,
 * a comma-separated list of section names):
 *
 * - `lldp`: each NIC's LLDP data (switch chassis IDs, port IDs, switch
 *   names), the topology of the infrastructure network;
 * - `serialNumbers`: the chassis and disk serial numbers and the disks'
 *   WWNs, asset identifiers;
 * - `firmware`: the BIOS vendor, version and date, the patch level of the
 *   infrastructure.
 *
 * Infrastructure admins always see the whole inventory (admin-projection.ts).
 */
import type { HostDeployPolicy } from '../../metal3/types.js';
import { sharedInventoryAnnotation } from '../../tenancy/policy.js';
import { isJsonObject } from '../../api/json-value.js';

export const inventorySections = ['lldp', 'serialNumbers', 'firmware'] as const;
export type InventorySection = (typeof inventorySections)[number];

type Fields = Record<string, unknown>;

/** The sections any of the (admitting) policies shares, in the order above; unknown names are ignored. */
export function sharedSections(policies: readonly HostDeployPolicy[]): InventorySection[] {
  const named = new Set<string>();
  for (const policy of policies) {
    const value = policy.metadata.annotations?.[sharedInventoryAnnotation] ?? '';
    for (const name of value.split(',')) named.add(name.trim());
  }
  return inventorySections.filter((section) => named.has(section));
}

/** The pruned spec without the sections not shared; the input is never modified. */
export function withheld(spec: Fields, shared: readonly InventorySection[]): Fields {
  const hardware = spec['hardware'];
  if (!isJsonObject(hardware)) return spec;
  const result: Fields = { ...hardware };
  if (!shared.includes('firmware')) Reflect.deleteProperty(result, 'firmware');
  if (!shared.includes('serialNumbers')) {
    if (isJsonObject(result['systemVendor'])) result['systemVendor'] = without(result['systemVendor'], ['serialNumber']);
    result['storage'] = mapItems(result['storage'], (disk) => without(disk, ['serialNumber', 'wwn', 'wwnVendorExtension', 'wwnWithExtension']));
  }
  if (!shared.includes('lldp')) result['nics'] = mapItems(result['nics'], (nic) => without(nic, ['lldp']));
  for (const key of ['storage', 'nics']) if (result[key] === undefined) Reflect.deleteProperty(result, key);
  return { ...spec, hardware: result };
}

/** The items mapped; the array itself when no item changed (shared with the pruned inventory every tenant form starts from). */
function mapItems(value: unknown, map: (item: Fields) => Fields): unknown {
  if (!Array.isArray(value)) return value;
  const mapped = value.map((item: unknown) => (isJsonObject(item) ? map(item) : item));
  return mapped.every((item, index) => item === value[index]) ? value : mapped;
}

/** The fields without the keys; the object itself when it has none of them. */
function without(fields: Fields, keys: readonly string[]): Fields {
  if (!keys.some((key) => Object.hasOwn(fields, key))) return fields;
  return Object.fromEntries(Object.entries(fields).filter(([key]) => !keys.includes(key)));
}
