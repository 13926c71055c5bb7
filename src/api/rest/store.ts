/**
 * What the generic REST layer needs from a resource's storage. A read-only
 * resource provides a ReadableStore (get, list and the watch fan-out); only a
 * WritableStore can be dispatched create, update, patch and delete.
 */
import type { SelectionPredicate } from './selection.js';
import type { ApiObject, ObjectList } from './types.js';
import type { WatchHub } from './watch-hub.js';

export interface ListQuery {
  /**
   * What the request selects. A store may push part of it down to narrow
   * what it reads; the REST layer applies it to everything a store returns,
   * so a store never has to (and cannot fail to) filter.
   */
  readonly selection: SelectionPredicate;
  readonly limit?: string;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
}

export interface WriteQuery {
  readonly dryRun?: readonly string[];
  readonly fieldManager?: string;
  readonly fieldValidation?: string;
  readonly force?: string;
}

export interface Written {
  readonly object: ApiObject;
  readonly warnings: readonly string[];
}

export interface DeleteOptions {
  readonly propagationPolicy?: string;
  readonly orphanDependents?: boolean;
  readonly gracePeriodSeconds?: number;
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly dryRun?: readonly string[];
}

/**
 * The outcome of a delete: gone (kube-apiserver answers a custom resource's
 * immediate deletion with a Status naming it, not with the object), or
 * still there with a deletionTimestamp while finalizers run.
 */
export type Deleted =
  | { readonly kind: 'gone'; readonly name: string; readonly uid?: string }
  | { readonly kind: 'pending'; readonly object: ApiObject };

export interface ReadableStore {
  /** The in-memory state and watch fan-out every watch of the resource subscribes to. */
  readonly hub: WatchHub;
  /** resourceVersion: undefined for a consistent read; otherwise kube's semantics ("0": whatever the cache holds). */
  get(namespace: string, name: string, resourceVersion: string | undefined): Promise<ApiObject>;
  /** namespace undefined: all namespaces. Items in kube's order (compareStorageKeys). */
  list(namespace: string | undefined, query: ListQuery): Promise<ObjectList>;
  /**
   * The objects of several namespaces at one resourceVersion, in kube's
   * order (a list of all namespaces narrowed to a requester's), when the
   * store can read them together more cheaply than one by one; undefined
   * (or no method) lets the REST layer list each namespace. Never paged.
   */
  listNamespaces?(namespaces: readonly string[], query: ListQuery): Promise<ObjectList | undefined>;
}

export interface WritableStore extends ReadableStore {
  create(namespace: string, object: ApiObject, query: WriteQuery): Promise<Written>;
  update(namespace: string, object: ApiObject, subresource: '' | 'status', query: WriteQuery): Promise<Written>;
  apply(namespace: string, name: string, configuration: ApiObject, subresource: '' | 'status', query: WriteQuery): Promise<Written>;
  delete(namespace: string, name: string, options: DeleteOptions): Promise<Deleted>;
}
