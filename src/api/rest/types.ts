/**
 * The object model the generic REST layer works with. Objects are plain
 * JSON as received from kube-apiserver (translated to the virtual group by
 * the resource's storage mapping); the layer never re-serializes them
 * through typed models, so unknown fields and timestamps survive untouched.
 */
import type { ApiError } from '../status.js';

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly apiVersion?: string;
  readonly time?: string;
  readonly fieldsType?: string;
  readonly fieldsV1?: Record<string, unknown>;
  readonly subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  readonly items: ApiObject[];
}

/** A change to a virtual object, as the watch fan-out delivers it. */
export interface ObjectEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: ApiObject;
}

/** Parses a kube resourceVersion (an etcd revision) for ordering; kube's RVs are shared across resources. */
export function revision(resourceVersion: string | undefined): bigint {
  if (resourceVersion === undefined || !/^\d+$/.test(resourceVersion)) return -1n;
  return BigInt(resourceVersion);
}

/**
 * The order of every list, as kube-apiserver's: by storage key
 * (`/registry/<group>/<resource>/<namespace>/<name>`, compared bytewise by
 * etcd and by the watch cache's B-tree), i.e. by the bytes of
 * `<namespace>/<name>`. Not namespace first: `tenant-a/x` comes before
 * `tenant/x`, since '-' sorts before '/'. Names and namespaces are ASCII, so
 * comparing UTF-16 code units is comparing bytes.
 */
export function compareStorageKeys(a: ApiObject, b: ApiObject): number {
  const ka = storageKey(a.metadata.namespace, a.metadata.name);
  const kb = storageKey(b.metadata.namespace, b.metadata.name);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** What compareStorageKeys compares: `<namespace>/<name>`. */
export function storageKey(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

/**
 * One event for one watcher. Object events built from the history are
 * shared by every watcher that receives them (treat as immutable), so a
 * sink can serialize each once per representation (kube's cachingObject).
 */
export type WatchEventOut =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: ApiObject }
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string; readonly initialEventsEnd: boolean }
  | { readonly type: 'ERROR'; readonly status: ApiError };
