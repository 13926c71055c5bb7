/**
 * A HostClaimRecord as the binder sees it: the tenant's claim (namespace,
 * name, virtual uid, spec, annotations) plus the binding state the binder
 * keeps on the record under controller annotations.
 */
import type { ApiObject } from '../../api/rest/types.js';
import { backingName, bookkeeping, controllerAnnotationPrefix, virtualUid } from '../../backing/storage-mapping.js';
import type { BareMetalHost, CustomDeploy, Image, SecretReference } from '../../metal3/types.js';
import { boundRecord, type RecordIdentity } from '../../tenancy/host-references.js';
import { hostKey, nodeReuseLabelValue, type HostSelector, type ReleasingPoolHosts } from '../../tenancy/selection.js';

/** Finalizer the binder puts on a record before binding it, so a deleted claim gives its host back first. */
export const releaseFinalizer = 'infra.tenancy.metal3.io/release';

export const bindingAnnotations = {
  /** `<namespace>/<name>` of the host chosen for the claim; written before the host's consumerRef. */
  host: `${controllerAnnotationPrefix}host`,
  /** Set once the binding ended without the tenant asking (host deleted or taken back by an admin). */
  ended: `${controllerAnnotationPrefix}ended`,
} as const;

export interface HostClaimSpec {
  poweredOn?: boolean;
  image?: Image | null;
  customDeploy?: CustomDeploy | null;
  userData?: SecretReference | null;
  networkData?: SecretReference | null;
  metaData?: SecretReference | null;
  hostSelector?: HostSelector;
  failureDomain?: string;
  nodeReuse?: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface HostClaimStatus {
  lastUpdated?: string;
  conditions?: Condition[];
  bareMetalHost?: { namespace: string; name: string };
  hardwareData?: { namespace: string; name: string };
  poweredOn?: boolean;
}

export interface Claim {
  readonly record: ApiObject;
  readonly identity: RecordIdentity;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly spec: HostClaimSpec;
  readonly status: HostClaimStatus;
  /** The tenant's annotations (reboot and detach requests among them). */
  readonly annotations: Readonly<Record<string, string>>;
  readonly deleting: boolean;
  readonly chosenHost: string | undefined;
  readonly ended: string | undefined;
}

export function claimOf(record: ApiObject): Claim | undefined {
  const { metadata } = record;
  const namespace = metadata.labels?.[bookkeeping.namespaceLabel];
  const name = metadata.annotations?.[bookkeeping.nameAnnotation];
  if (namespace === undefined || name === undefined || metadata.uid === undefined || metadata.name === undefined) return undefined;
  // As for the API: a record whose bookkeeping does not match its name is not a claim.
  if (metadata.name !== backingName(namespace, name)) return undefined;
  const annotations = metadata.annotations ?? {};
  return {
    record,
    identity: { namespace: metadata.namespace ?? '', name: metadata.name, uid: metadata.uid },
    namespace,
    name,
    uid: virtualUid(metadata.uid),
    generation: metadata.generation ?? 0,
    spec: objectField(record, 'spec'),
    status: objectField(record, 'status'),
    annotations,
    deleting: metadata.deletionTimestamp !== undefined,
    chosenHost: annotations[bindingAnnotations.host],
    ended: annotations[bindingAnnotations.ended],
  };
}

export function hasReleaseFinalizer(claim: Claim): boolean {
  return (claim.record.metadata.finalizers ?? []).includes(releaseFinalizer);
}

/** The node-reuse label the claim's release leaves on its host: its pool's, when it names one. */
export function releaseLabel(claim: Claim): string | undefined {
  const pool = claim.spec.nodeReuse;
  return pool === undefined || pool === '' ? undefined : nodeReuseLabelValue(claim.namespace, pool);
}

/**
 * Hosts still bound to a deleted claim of a node-reuse pool, with the label
 * its release will put on them. The record cache shows a deletion before any
 * claim created after it (one watch, in order), while the label only comes
 * with the release's first host write: a pool's next claim created in
 * between must wait for that host, not take another. From the records (the
 * binder passes the deleted pool claims, from an index) and the hosts
 * naming each of them as consumer, so a bind does not walk every host.
 */
export function releasingPoolHosts(records: readonly ApiObject[], hostsNaming: (record: RecordIdentity) => readonly BareMetalHost[]): ReleasingPoolHosts {
  const releasing = new Map<string, string>();
  for (const record of records) {
    const claim = claimOf(record);
    const label = claim?.deleting === true ? releaseLabel(claim) : undefined;
    if (claim === undefined || label === undefined) continue;
    // The uid, as for the binding itself: a claim re-created under the same name is not the one holding the host.
    for (const host of hostsNaming(claim.identity)) if (boundRecord(host)?.uid === claim.identity.uid) releasing.set(hostKey(host), label);
  }
  return releasing;
}

/** Whether the claim is being deleted and its release will mark its host for a node-reuse pool. */
export function isReleasingForPool(claim: Claim): boolean {
  return claim.deleting && releaseLabel(claim) !== undefined;
}

function objectField(record: ApiObject, field: string): object {
  const value = record[field];
  return typeof value === 'object' && value !== null ? value : {};
}
