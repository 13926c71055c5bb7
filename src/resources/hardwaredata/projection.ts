/**
 * HardwareData: what one tenant namespace may know about one BareMetalHost,
 * as a pure function of the host, the HostDeployPolicies and the HostClaims.
 * The live feed (from informers) and consistent reads (from fresh lists) both
 * call it, so the two can never disagree on visibility or content.
 *
 * - Visible: a free host (no consumerRef, not being deleted) that a policy of
 *   its namespace admits the tenant to, or a host bound to one of the
 *   tenant's own HostClaims (whatever the policies say now, so revoking a
 *   policy never hides a tenant's own machine). Hosts bound to anyone else
 *   are invisible.
 * - Content: `spec.hardware` is the host's `status.hardware` pruned to the
 *   HardwareData schema, without the inventory sections the admitting
 *   policies do not share (inventory.ts). Labels are
 *   those an admitting policy shares by pattern, never infrastructure keys.
 *   One annotation, `tenancy.metal3.io/boot-mac-address`: the host's
 *   `spec.bootMACAddress`, which CAPM3's templates address (`fromBootMAC`)
 *   and upstream HardwareData has no field for; an annotation is what a
 *   client built on upstream's Go types reads without any change (CAPM3's
 *   HostClaim prototype reads HardwareData annotations for
 *   `fromAnnotation`). No other annotation, owners, finalizers or
 *   managedFields.
 *
 * This is the tenant form. The host it was made from is kept beside it
 * (`sourceOf`) for the infrastructure admin form (admin-projection.ts).
 */
import { tenancyV1alpha1 } from '../../api/group.js';
import { pruneToSchema } from '../../api/openapi/prune.js';
import type { K8sSchema } from '../../api/openapi/schema-source.js';
import { encodeOnce } from '../../api/rest/serialized.js';
import { revision, type ApiObject } from '../../api/rest/types.js';
import { groupVersionString } from '../../api/resource.js';
import { derivedUid, virtualUid } from '../../backing/storage-mapping.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../metal3/types.js';
import { boundRecord, hardwareDataName, isFree } from '../../tenancy/host-references.js';
import { admittingPolicies, sharesLabelKey, tenantNamespace } from '../../tenancy/policy.js';
import { sharedSections, withheld, type InventorySection } from './inventory.js';

export const hardwareDataApiVersion = groupVersionString(tenancyV1alpha1);

/** The HardwareData annotation carrying the host's boot MAC address. */
export const bootMacAddressAnnotation = 'tenancy.metal3.io/boot-mac-address';

/** What BMO's webhook accepts as `bootMACAddress` (six colon- or dash-separated hex octets). */
const macAddress = /^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$/;

/**
 * Label domains never shown, whatever a policy shares: they carry other
 * tenants' names (cluster.x-k8s.io/cluster-name), node-reuse pools and
 * infrastructure state (metal3.io and its subdomains, this project's
 * tenancy.metal3.io included).
 */
const infrastructureDomains = ['metal3.io', 'cluster.x-k8s.io'] as const;

/** Everything that decides what one tenant namespace sees of the hosts. */
export interface TenantView {
  readonly namespace: string;
  /** The policies admitting the namespace, by the host namespace they govern. */
  readonly admitting: ReadonlyMap<string, readonly HostDeployPolicy[]>;
  /** The namespace of every existing HostClaim, by the claim's uid. */
  readonly claimNamespaces: ClaimNamespaces;
}

/** The namespace of a HostClaim by its uid. */
export type ClaimNamespaces = Pick<ReadonlyMap<string, string>, 'get'>;

export function tenantView(namespace: Namespace, policies: readonly HostDeployPolicy[], claimNamespaces: ClaimNamespaces): TenantView {
  const name = namespace.metadata.name;
  return { namespace: name, admitting: admittingPolicies(policies, tenantNamespace(namespace, name)), claimNamespaces };
}

/** The namespace of each HostClaim, by uid: what decides who a bound host belongs to. */
export function claimNamespacesOf(claims: readonly ApiObject[]): Map<string, string> {
  const result = new Map<string, string>();
  for (const claim of claims) {
    const { uid, namespace } = claim.metadata;
    if (uid !== undefined && namespace !== undefined) result.set(uid, namespace);
  }
  return result;
}

/**
 * The object's resourceVersion: the newest revision among the inputs that
 * produced it (the host, the tenant namespace, the policies of the host's
 * namespace admitting the tenant), so every replica gives the same state the
 * same resourceVersion. The binding claim only decides visibility (its
 * namespace never changes); its appearance and disappearance are ADDED and
 * DELETED, never a new version.
 */
export function stateRevision(host: BareMetalHost, namespace: Namespace | undefined, view: TenantView): bigint {
  let newest = revision(host.metadata.resourceVersion);
  const consider = (rv: string | undefined): void => {
    const value = revision(rv);
    if (value > newest) newest = value;
  };
  consider(namespace?.metadata.resourceVersion);
  for (const policy of policiesFor(host, view)) consider(policy.metadata.resourceVersion);
  return newest;
}

export function isVisible(host: BareMetalHost, view: TenantView): boolean {
  const record = boundRecord(host);
  if (record !== undefined) return view.claimNamespaces.get(virtualUid(record.uid)) === view.namespace;
  return isFree(host) && host.metadata.deletionTimestamp === undefined && policiesFor(host, view).length > 0;
}

/**
 * The tenant's HardwareData for the host, or undefined when the tenant may
 * not see the host. `specSchema` is the resolved HardwareDataSpec schema.
 */
export function hardwareData(host: BareMetalHost, view: TenantView, specSchema: K8sSchema, resourceVersion?: string): ApiObject | undefined {
  if (!isVisible(host, view)) return undefined;
  const hostNamespace = host.metadata.namespace ?? '';
  const policies = policiesFor(host, view);
  const labels = sharedLabels(host.metadata.labels ?? {}, policies);
  const { creationTimestamp } = host.metadata;
  const annotations = bootMacAnnotation(host);
  const object: ApiObject = {
    apiVersion: hardwareDataApiVersion,
    kind: 'HardwareData',
    metadata: {
      name: hardwareDataName(hostNamespace, host.metadata.name),
      namespace: view.namespace,
      uid: hardwareDataUid(view.namespace, host.metadata.uid ?? ''),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      ...(creationTimestamp === undefined ? {} : { creationTimestamp }),
      ...(Object.keys(labels).length === 0 ? {} : { labels }),
      ...(annotations === undefined ? {} : { annotations }),
    },
    spec: tenantSpec(host, specSchema, sharedSections(policies)),
  };
  sources.set(object, { host, inventory: prunedSpec(host, specSchema) });
  return object;
}

/** What a HardwareData object was made from: the host, and its whole inventory pruned to the schema. */
export interface HardwareDataSource {
  readonly host: BareMetalHost;
  readonly inventory: Readonly<Record<string, unknown>>;
}

/** Kept beside each object, never in it; a copy of the object has none (it shows the tenant form). */
const sources = new WeakMap<ApiObject, HardwareDataSource>();

export function sourceOf(object: ApiObject): HardwareDataSource | undefined {
  return sources.get(object);
}

/** The pruned inventory, computed once per host version (a new version is a new object) and shared by every tenant seeing it. */
const prunedSpecs = new WeakMap<BareMetalHost, Record<string, unknown>>();
/** The tenant inventories of a host version, by the sections shared; shared by every tenant with the same sections. */
const tenantSpecs = new WeakMap<BareMetalHost, Map<string, Record<string, unknown>>>();

function tenantSpec(host: BareMetalHost, specSchema: K8sSchema, shared: readonly InventorySection[]): Record<string, unknown> {
  let specs = tenantSpecs.get(host);
  if (specs === undefined) {
    specs = new Map();
    tenantSpecs.set(host, specs);
  }
  const key = shared.join(',');
  let spec = specs.get(key);
  if (spec === undefined) {
    spec = withheld(prunedSpec(host, specSchema), shared);
    // Every tenant's HardwareData of this host version holds this spec: its JSON is encoded once, not once per object.
    encodeOnce(spec);
    specs.set(key, spec);
  }
  return spec;
}

function prunedSpec(host: BareMetalHost, specSchema: K8sSchema): Record<string, unknown> {
  let spec = prunedSpecs.get(host);
  if (spec === undefined) {
    spec = (pruneToSchema({ hardware: host.status?.hardware }, specSchema) ?? {}) as Record<string, unknown>;
    prunedSpecs.set(host, spec);
  }
  return spec;
}

/** The boot MAC annotation, when the host has a well-formed `spec.bootMACAddress`. */
function bootMacAnnotation(host: BareMetalHost): Record<string, string> | undefined {
  const mac = host.spec.bootMACAddress;
  return typeof mac === 'string' && macAddress.test(mac) ? { [bootMacAddressAnnotation]: mac } : undefined;
}

/** Derived from the tenant namespace and the host: one host seen by two tenants is two objects. */
export function hardwareDataUid(tenantNamespace: string, hostUid: string): string {
  return derivedUid('hardwaredata-uid', tenantNamespace, hostUid);
}

/** The host labels the policies share, minus infrastructure keys; sorted, so equal sets serialize identically. */
export function sharedLabels(labels: Readonly<Record<string, string>>, policies: readonly HostDeployPolicy[]): Record<string, string> {
  const keys = Object.keys(labels)
    .filter((key) => !isInfrastructureKey(key) && sharesLabelKey(policies, key))
    .sort();
  return Object.fromEntries(keys.map((key) => [key, labels[key] ?? '']));
}

function isInfrastructureKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return infrastructureDomains.some((d) => domain === d || domain.endsWith(`.${d}`));
}

function policiesFor(host: BareMetalHost, view: TenantView): readonly HostDeployPolicy[] {
  return view.admitting.get(host.metadata.namespace ?? '') ?? [];
}
