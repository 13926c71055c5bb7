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
import { tenancyV1alpha1 } from '../group.js';
import { pruneToSchema } from '../../api/openapi/prune.js';
import type { K8sSchema } from '../../api/openapi/schema.js';
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
  const shared = sharedPart(host, policiesFor(host, view));
  const own = namespaceRevision(namespace);
  return own > shared.revision ? own : shared.revision;
}

export function isVisible(host: BareMetalHost, view: TenantView): boolean {
  const claim = boundClaimUid(host);
  if (claim !== undefined) return view.claimNamespaces.get(claim) === view.namespace;
  return isFree(host) && host.metadata.deletionTimestamp === undefined && policiesFor(host, view).length > 0;
}

/**
 * The tenant's HardwareData for the host, or undefined when the tenant may
 * not see the host. `specSchema` is the resolved HardwareDataSpec schema.
 */
export function hardwareData(host: BareMetalHost, view: TenantView, specSchema: K8sSchema, resourceVersion?: string): ApiObject | undefined {
  if (!isVisible(host, view)) return undefined;
  const shared = sharedPart(host, policiesFor(host, view));
  const { creationTimestamp } = host.metadata;
  const object: ApiObject = {
    apiVersion: hardwareDataApiVersion,
    kind: 'HardwareData',
    metadata: {
      name: shared.name,
      namespace: view.namespace,
      uid: hardwareDataUid(view.namespace, host.metadata.uid ?? ''),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      ...(creationTimestamp === undefined ? {} : { creationTimestamp }),
      ...(shared.labels === undefined ? {} : { labels: shared.labels }),
      ...(shared.annotations === undefined ? {} : { annotations: shared.annotations }),
    },
    spec: tenantSpec(host, specSchema, shared.sections),
  };
  Object.defineProperty(object, sourceKey, { value: sourceFor(host, specSchema) });
  return object;
}

/**
 * What every tenant admitted by the same policies sees of one host version,
 * computed once and shared by their objects (immutable, as every object the
 * hub holds): a host event re-projects the host for every tenant seeing it,
 * up to every tenant namespace of the cluster.
 */
interface SharedPart {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>> | undefined;
  readonly annotations: Readonly<Record<string, string>> | undefined;
  readonly sections: readonly InventorySection[];
  /** The newest revision among the host and the policies (a tenant adds its namespace's). */
  readonly revision: bigint;
}

/** By host version, then by the admitting policies (a visibility class's array: one per class, shared by its tenants). */
const sharedParts = new WeakMap<BareMetalHost, WeakMap<readonly HostDeployPolicy[], SharedPart>>();

function sharedPart(host: BareMetalHost, policies: readonly HostDeployPolicy[]): SharedPart {
  let byPolicies = sharedParts.get(host);
  if (byPolicies === undefined) {
    byPolicies = new WeakMap();
    sharedParts.set(host, byPolicies);
  }
  let part = byPolicies.get(policies);
  if (part === undefined) {
    const labels = sharedLabels(host.metadata.labels ?? {}, policies);
    let revision = cachedRevision(host);
    for (const policy of policies) revision = maxRevision(revision, policy.metadata.resourceVersion);
    part = {
      name: hardwareDataName(host.metadata.namespace ?? '', host.metadata.name),
      labels: Object.keys(labels).length === 0 ? undefined : labels,
      annotations: bootMacAnnotation(host),
      sections: sharedSections(policies),
      revision,
    };
    byPolicies.set(policies, part);
  }
  return part;
}

/** What a HardwareData object was made from: the host, and its whole inventory pruned to the schema. */
export interface HardwareDataSource {
  readonly host: BareMetalHost;
  readonly inventory: Readonly<Record<string, unknown>>;
}

/**
 * Kept on each object under a symbol, not enumerable: never serialized, and
 * a copy of the object has none (it shows the tenant form). Not a WeakMap
 * beside the objects: a host event makes an object per tenant, and an entry
 * per object cost the garbage collector more than the object itself.
 */
const sourceKey = Symbol('hardwareDataSource');

export function sourceOf(object: ApiObject): HardwareDataSource | undefined {
  return Reflect.get(object, sourceKey) as HardwareDataSource | undefined;
}

/** One source per host version, shared by every tenant's object. */
const hostSources = new WeakMap<BareMetalHost, HardwareDataSource>();

function sourceFor(host: BareMetalHost, specSchema: K8sSchema): HardwareDataSource {
  let source = hostSources.get(host);
  if (source === undefined) {
    source = { host, inventory: prunedSpec(host, specSchema) };
    hostSources.set(host, source);
  }
  return source;
}

/** The (virtual) HostClaim uid the host is bound to, derived once per host version: visibility asks it per tenant. */
const boundClaims = new WeakMap<BareMetalHost, string | null>();

export function boundClaimUid(host: BareMetalHost): string | undefined {
  let claim = boundClaims.get(host);
  if (claim === undefined) {
    const record = boundRecord(host);
    claim = record === undefined ? null : virtualUid(record.uid);
    boundClaims.set(host, claim);
  }
  return claim ?? undefined;
}

/** Revisions parsed once per object version (a tenant's object takes the newest of its inputs'). */
const revisions = new WeakMap<BareMetalHost | Namespace, bigint>();

function namespaceRevision(namespace: Namespace | undefined): bigint {
  return namespace === undefined ? 0n : cachedRevision(namespace);
}

function cachedRevision(object: BareMetalHost | Namespace): bigint {
  let value = revisions.get(object);
  if (value === undefined) {
    value = revision(object.metadata.resourceVersion);
    revisions.set(object, value);
  }
  return value;
}

function maxRevision(current: bigint, rv: string | undefined): bigint {
  const value = revision(rv);
  return value > current ? value : current;
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

/**
 * Derived from the tenant namespace and the host: one host seen by two
 * tenants is two objects. A host event derives the uid for every tenant
 * seeing the host, twice when it stays visible (before and after), and a
 * binding brings two or three events on one host: the uids of the last few
 * hosts are kept (at most one per tenant namespace each).
 */
export function hardwareDataUid(tenantNamespace: string, hostUid: string): string {
  let byTenant = recentUids.get(hostUid);
  if (byTenant === undefined) {
    byTenant = new Map();
    recentUids.set(hostUid, byTenant);
    // The oldest host out: insertion order is first-use order.
    if (recentUids.size > recentUidHosts) recentUids.delete(recentUids.keys().next().value ?? '');
  }
  let uid = byTenant.get(tenantNamespace);
  if (uid === undefined) {
    uid = derivedUid('hardwaredata-uid', tenantNamespace, hostUid);
    byTenant.set(tenantNamespace, uid);
  }
  return uid;
}

const recentUidHosts = 8;
/** HardwareData uids by host uid, then tenant namespace, for the last `recentUidHosts` hosts. */
const recentUids = new Map<string, Map<string, string>>();

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

/** One empty array for every miss: it keys the shared parts of tenants no policy admits (a host bound to their claim). */
const noPolicies: readonly HostDeployPolicy[] = Object.freeze([]);

function policiesFor(host: BareMetalHost, view: TenantView): readonly HostDeployPolicy[] {
  return view.admitting.get(host.metadata.namespace ?? '') ?? noPolicies;
}
