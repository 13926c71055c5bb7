/**
 * A consistent GET of one HardwareData, fenced by what that one object is
 * made of instead of by every input whole (feed.consistent() probes every
 * host and claim record, which costs kube-apiserver about what listing
 * them costs: ~58 ms of control-plane CPU per GET at 2,000 hosts).
 *
 * The object (projection.ts) is a function of the host, the tenant
 * namespace (its labels), the policies of the host's namespace, and, when
 * the host is bound, the claim record its consumerRef names. Each is
 * proven current by a probe of just that scope (backing/consistent-read.ts:
 * a metadata list with a field selector), like a HostClaim GET, and the
 * object is computed from the shared caches, not from the model: the model
 * applies changes in merged revision order and may lag a cache already
 * proven current. Its resourceVersion is the stateRevision the model gives
 * the same inputs, so a GET agrees with a later list or watch.
 *
 * undefined tells the caller to take the whole-input path: a name that
 * does not name a host the process can resolve (a digest name of a host
 * the model has not seen yet), an input not served, a cache that cannot
 * prove itself current in time.
 */
import type { ApiObject } from '../../api/rest/types.js';
import { escapeFieldValue } from '../../api/field-selector.js';
import type { ProbeScope } from '../../backing/consistent-read.js';
import { bookkeeping, virtualUid } from '../../backing/storage-mapping.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../metal3/types.js';
import { boundRecord, hardwareDataName, type RecordIdentity } from '../../tenancy/host-references.js';
import { admits, tenantNamespace } from '../../tenancy/policy.js';
import type { HardwareDataModel } from './model.js';
import type { ClaimNamespaces } from './projection.js';

export type ObjectInput = 'hosts' | 'policies' | 'namespaces' | 'claims';

/** What the read needs of the feed: its shared caches, the claims, and a fence of one scope of an input. */
export interface ObjectInputs {
  readonly model: HardwareDataModel;
  host(namespace: string, name: string): BareMetalHost | undefined;
  namespace(name: string): Namespace | undefined;
  policiesIn(namespace: string): HostDeployPolicy[];
  /** The claim record's cached object (in the storage namespace's cache). */
  record(reference: RecordIdentity): ApiObject | undefined;
  /** Whether the HostClaim with this uid is in the claims hub, in that namespace under that name. */
  hasClaim(namespace: string, name: string, uid: string): boolean;
  /** True when the scope of the input is proven current; false when it cannot be (not served, unhealthy, late). */
  fence(input: ObjectInput, scope: ProbeScope): Promise<boolean>;
}

/** The tenant's object (undefined: it does not exist for that tenant), or undefined for the whole-input path. */
export type ScopedRead = { readonly object: ApiObject | undefined } | undefined;

export async function readObject(inputs: ObjectInputs, tenant: string, name: string): Promise<ScopedRead> {
  const named = hostNamed(inputs.model, name);
  if (named === undefined) return undefined;
  const fresh = await Promise.all([
    inputs.fence('hosts', {
      key: `host ${named.namespace}/${named.name}`,
      fieldSelector: `metadata.namespace=${escapeFieldValue(named.namespace)},metadata.name=${escapeFieldValue(named.name)}`,
      cached: () => present(inputs.host(named.namespace, named.name)),
    }),
    inputs.fence('namespaces', { key: `namespace ${tenant}`, fieldSelector: `metadata.name=${escapeFieldValue(tenant)}`, cached: () => present(inputs.namespace(tenant)) }),
    inputs.fence('policies', {
      key: `namespace ${named.namespace}`,
      fieldSelector: `metadata.namespace=${escapeFieldValue(named.namespace)}`,
      cached: () => inputs.policiesIn(named.namespace),
    }),
  ]);
  if (fresh.includes(false)) return undefined;
  const host = inputs.host(named.namespace, named.name);
  const namespace = inputs.namespace(tenant);
  if (host === undefined || namespace === undefined) return { object: undefined };
  const claims = await claimOfHost(inputs, host);
  if (claims === undefined) return undefined;
  const admitting = inputs.policiesIn(named.namespace).filter((policy) => admits(policy, tenantNamespace(namespace, tenant)));
  const context = { namespace: tenant, object: namespace, admitting: new Map([[named.namespace, admitting]]) };
  return { object: inputs.model.object(host, context, claims) };
}

/** The host a HardwareData name names: `<namespace>.<name>`, or for a digest name the host the model knows by it. */
function hostNamed(model: HardwareDataModel, name: string): { namespace: string; name: string } | undefined {
  const dot = name.indexOf('.');
  if (dot > 0) {
    const candidate = { namespace: name.slice(0, dot), name: name.slice(dot + 1) };
    if (hardwareDataName(candidate.namespace, candidate.name) === name) return candidate;
  }
  return model.hostNamed(name);
}

/**
 * The namespace of the claim the host is bound to, as the model would know
 * it (the claims hub), its record proven current; no claim for a free host.
 * undefined when the record cannot be proven current.
 */
async function claimOfHost(inputs: ObjectInputs, host: BareMetalHost): Promise<ClaimNamespaces | undefined> {
  const reference = boundRecord(host);
  if (reference === undefined) return noClaims;
  const fresh = await inputs.fence('claims', {
    key: `object ${reference.name}`,
    fieldSelector: `metadata.name=${escapeFieldValue(reference.name)}`,
    cached: () => present(inputs.record(reference)),
  });
  if (!fresh) return undefined;
  const record = inputs.record(reference);
  const namespace = record?.metadata.labels?.[bookkeeping.namespaceLabel];
  const name = record?.metadata.annotations?.[bookkeeping.nameAnnotation];
  const uid = virtualUid(reference.uid);
  if (record?.metadata.uid !== reference.uid || namespace === undefined || name === undefined || !inputs.hasClaim(namespace, name, uid)) return noClaims;
  return { get: (claim) => (claim === uid ? namespace : undefined) };
}

const noClaims: ClaimNamespaces = { get: () => undefined };

function present<T>(object: T | undefined): T[] {
  return object === undefined ? [] : [object];
}
