/**
 * How hosts and claims point at each other. The BareMetalHost's
 * `spec.consumerRef` is the binding lock and the source of truth; it names
 * the claim's backing record (never a `metal3.io` HostClaim, which BMO's own
 * HostClaim controller would try to reconcile), including the record's uid
 * so that a claim deleted and re-created under the same name never inherits
 * the old binding.
 */
import { backingName } from '../backing/storage-mapping.js';
import type { BareMetalHost, ObjectReference } from '../metal3/types.js';
import { hostClaimRecord } from './claim-record.js';

const recordApiVersion = `${hostClaimRecord.group}/${hostClaimRecord.version}`;

export interface RecordIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export function recordConsumerRef(record: RecordIdentity): ObjectReference {
  return { apiVersion: recordApiVersion, kind: hostClaimRecord.kind, namespace: record.namespace, name: record.name, uid: record.uid };
}

/** The record a host is bound to, when its consumer is one of ours. */
export function boundRecord(host: BareMetalHost): RecordIdentity | undefined {
  const ref = host.spec.consumerRef;
  if (ref?.kind !== hostClaimRecord.kind || ref.apiVersion !== recordApiVersion) return undefined;
  if (ref.namespace === undefined || ref.name === undefined || ref.uid === undefined) return undefined;
  return { namespace: ref.namespace, name: ref.name, uid: ref.uid };
}

export function isFree(host: BareMetalHost): boolean {
  return host.spec.consumerRef === undefined || host.spec.consumerRef === null;
}

/**
 * The name of the tenant's HardwareData for a host: `<host-namespace>.<host-name>`,
 * or the same collision-free digest form as backing records when that is too long.
 */
export function hardwareDataName(hostNamespace: string, hostName: string): string {
  return backingName(hostNamespace, hostName);
}
