/**
 * HostDeployPolicy evaluation: which tenant namespaces may use the hosts of
 * an infrastructure namespace. The upstream CRD (metal3.io/v1alpha1) is the
 * authority; the semantics follow BMO's implementation, except that
 * `nameMatches` must match the whole namespace name and runs on RE2 (linear
 * time, the same syntax as Go's regexp), so an admin's pattern can neither
 * admit `xtenant-a` by accident nor stall the server.
 */
import type { HostClaimNamespaces, HostDeployPolicy, Namespace } from '../metal3/types.js';
import { matchesWhole } from './patterns.js';

/** Annotation on a HostDeployPolicy allowing tenants to detach the hosts it admits them to. */
export const allowsDetachingAnnotation = 'tenancy.metal3.io/allows-detaching';

/**
 * Annotation on a HostDeployPolicy: an RE2 pattern (matched against the whole
 * key) of the host label keys shown on the HardwareData of the tenants it admits.
 */
export const sharedLabelsAnnotation = 'tenancy.metal3.io/shared-labels';

/**
 * Annotation on a HostDeployPolicy: the HardwareData inventory sections
 * (comma-separated: `lldp`, `serialNumbers`, `firmware`) shown to the tenants
 * it admits beyond the default (resources/hardwaredata/inventory.ts). An
 * annotation, like the shared labels: the CRD is baremetal-operator's, and
 * kube-apiserver prunes spec fields its schema does not declare.
 */
export const sharedInventoryAnnotation = 'tenancy.metal3.io/shared-inventory';

export interface TenantNamespace {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export function tenantNamespace(namespace: Namespace | undefined, name: string): TenantNamespace {
  return { name, labels: namespace?.metadata.labels ?? {} };
}

/**
 * Whether one policy admits a namespace: `hostClaimNamespaces` omitted admits
 * nothing, `{}` admits every namespace, otherwise every constraint present
 * must hold.
 */
export function admits(policy: HostDeployPolicy, namespace: TenantNamespace): boolean {
  const constraints = policy.spec?.hostClaimNamespaces;
  if (constraints === undefined || constraints === null) return false;
  return namesAdmit(constraints, namespace) && patternAdmits(constraints, namespace) && labelsAdmit(constraints, namespace);
}

/** The policies (of any namespace) that admit the tenant namespace, grouped by the host namespace they govern. */
export function admittingPolicies(
  policies: readonly HostDeployPolicy[],
  namespace: TenantNamespace,
): ReadonlyMap<string, readonly HostDeployPolicy[]> {
  const byHostNamespace = new Map<string, HostDeployPolicy[]>();
  for (const policy of policies) {
    const hostNamespace = policy.metadata.namespace;
    if (hostNamespace === undefined || !admits(policy, namespace)) continue;
    const group = byHostNamespace.get(hostNamespace) ?? [];
    group.push(policy);
    byHostNamespace.set(hostNamespace, group);
  }
  return byHostNamespace;
}

/** Whether any of the (admitting) policies shares the host label key with tenants. */
export function sharesLabelKey(policies: readonly HostDeployPolicy[], key: string): boolean {
  return policies.some((policy) => {
    const pattern = policy.metadata.annotations?.[sharedLabelsAnnotation];
    return pattern !== undefined && pattern !== '' && matchesWhole(pattern, key);
  });
}

/** Whether the admins allowed tenants to detach hosts, through any policy admitting them. */
export function allowsDetaching(policies: readonly HostDeployPolicy[]): boolean {
  return policies.some((policy) => policy.metadata.annotations?.[allowsDetachingAnnotation] === 'true');
}

function namesAdmit(constraints: HostClaimNamespaces, namespace: TenantNamespace): boolean {
  const names = constraints.names ?? [];
  return names.length === 0 || names.includes(namespace.name);
}

function patternAdmits(constraints: HostClaimNamespaces, namespace: TenantNamespace): boolean {
  const pattern = constraints.nameMatches ?? '';
  if (pattern === '') return true;
  return matchesWhole(pattern, namespace.name);
}

function labelsAdmit(constraints: HostClaimNamespaces, namespace: TenantNamespace): boolean {
  return (constraints.hasLabels ?? []).every(({ name, value }) => {
    const actual = namespace.labels[name];
    if (actual === undefined) return false;
    return value === undefined || value === '' || actual === value;
  });
}
