/**
 * Reads of a record-backed resource answered from memory, as kube-apiserver
 * answers them from its watch cache (k8s.io/apiserver pkg/storage/cacher:
 * cacher.go GetList/Get, delegator.go ShouldDelegateList;
 * KEP-2340 consistent reads from cache).
 *
 * - resourceVersion unset (a consistent read): after the fence
 *   (consistent-read.ts) for the read's scope: the one record for a GET or a
 *   list pinned to one name, the tenant namespace's records for a
 *   namespaced LIST, every claim record for a cluster-wide one.
 * - resourceVersion X (GET, or LIST NotOlderThan): from memory once the
 *   cache has reached X; a cache below X is fenced like a consistent read,
 *   whose resourceVersion is then at least X unless X is in the future.
 *
 * Everything else (Exact, limit, continue) is kube-apiserver's, and so is
 * every read the cache cannot answer in time (its watch broken, or lagging
 * beyond the fence's wait): `undefined` tells the caller to ask it.
 *
 * The objects come from the resource's WatchHub, which the same informer
 * handler feeds in the same turn as the records cache the fence looks at,
 * so what the fence approved is what is read.
 */
import { compareStorageKeys, revision, type ApiObject, type ObjectList } from '../api/rest/types.js';
import type { WatchHub } from '../api/rest/watch-hub.js';
import type { ListQuery } from '../api/rest/store.js';
import { escapeFieldValue } from '../api/selectors.js';
import { ConsistentReadFence, type ProbeScope } from './consistent-read.js';
import type { ProbeClient } from './consistent-read.js';
import type { SharedInformer } from './shared-informers.js';
import { backingName, bookkeeping, type StorageMapping } from './storage-mapping.js';

/** The records' index by tenant namespace (the bookkeeping label). */
export const tenantNamespaceIndex = {
  name: 'tenant-namespace',
  fn: (record: ApiObject): readonly string[] => {
    const namespace = record.metadata.labels?.[bookkeeping.namespaceLabel];
    return namespace === undefined ? [] : [namespace];
  },
} as const;

/** Beyond this many namespaces, a multi-namespace read probes every record instead of naming them in a selector (URL length). */
const maxNamespacesPerProbe = 100;

/** A GET's outcome from memory: the object, known absent, or ask kube-apiserver. */
export type CachedGet = { readonly found: ApiObject } | { readonly absent: true } | undefined;

export class CachedReads {
  private readonly fence: ConsistentReadFence;

  constructor(
    client: ProbeClient,
    private readonly records: SharedInformer<ApiObject>,
    private readonly hub: WatchHub,
    private readonly mapping: StorageMapping,
  ) {
    records.addIndexer(tenantNamespaceIndex.name, tenantNamespaceIndex.fn);
    this.fence = new ConsistentReadFence(client, records);
  }

  async get(namespace: string, name: string, resourceVersion: string | undefined): Promise<CachedGet> {
    const recordName = backingName(namespace, name);
    const at = await this.freshAt(this.objectScope(recordName), resourceVersion);
    if (at === undefined) return undefined;
    const record = this.records.get(this.mapping.storageNamespace, recordName);
    if (record === undefined) return { absent: true };
    const object = this.hub.get(namespace, name);
    // A record that does not map to this claim (a digest collision, tampering) is for kube-apiserver's path to refuse.
    if (object === undefined || object.metadata.resourceVersion !== record.metadata.resourceVersion) return undefined;
    return { found: object };
  }

  /** undefined: not servable from memory (Exact, limit, continue), or the cache could not answer in time. */
  async list(namespace: string | undefined, query: ListQuery): Promise<ObjectList | undefined> {
    if (query.continue !== undefined || query.limit !== undefined || query.resourceVersionMatch === 'Exact') return undefined;
    const name = query.selection.matchesSingle();
    const scope = name !== undefined && namespace !== undefined ? this.objectScope(backingName(namespace, name)) : this.collectionScope(namespace);
    const at = await this.freshAt(scope, query.resourceVersion);
    if (at === undefined) return undefined;
    const items =
      name !== undefined && namespace !== undefined ? [this.hub.get(namespace, name)].filter((o): o is ApiObject => o !== undefined) : this.hub.list(namespace);
    return {
      apiVersion: this.mapping.virtualApiVersion,
      kind: `${this.mapping.virtual.kind}List`,
      metadata: { resourceVersion: at },
      items: items.sort(compareStorageKeys),
    };
  }

  /**
   * Several namespaces' claims at once, behind one fence: a probe with the
   * namespace label `in` those namespaces (or, for many, of every record).
   * undefined as for list().
   */
  async listNamespaces(namespaces: readonly string[], query: ListQuery): Promise<ObjectList | undefined> {
    if (query.continue !== undefined || query.limit !== undefined || query.resourceVersionMatch === 'Exact') return undefined;
    const sorted = [...new Set(namespaces)].sort();
    const at = await this.freshAt(sorted.length > maxNamespacesPerProbe ? this.collectionScope(undefined) : this.namespacesScope(sorted), query.resourceVersion);
    if (at === undefined) return undefined;
    return {
      apiVersion: this.mapping.virtualApiVersion,
      kind: `${this.mapping.virtual.kind}List`,
      metadata: { resourceVersion: at },
      items: sorted.flatMap((namespace) => this.hub.list(namespace)),
    };
  }

  /**
   * The resourceVersion at which memory may answer for the scope, or
   * undefined to ask kube-apiserver. A client resourceVersion the cache
   * has reached needs no probe (NotOlderThan).
   */
  private async freshAt(scope: ProbeScope, resourceVersion: string | undefined): Promise<string | undefined> {
    if (!this.records.hasSynced()) return undefined;
    const minimum = resourceVersion === undefined ? undefined : revision(resourceVersion);
    // Malformed: kube-apiserver's path answers it with the right error.
    if (minimum !== undefined && minimum < 0n) return undefined;
    const current = this.hub.currentResourceVersion();
    if (minimum !== undefined && revision(current) >= minimum) return current;
    const freshness = await this.fence.fence(scope);
    if (!freshness.fresh) return undefined;
    // A resourceVersion beyond the cluster's: kube-apiserver's path waits for it or answers 504.
    if (minimum !== undefined && revision(freshness.resourceVersion) < minimum) return undefined;
    return freshness.resourceVersion;
  }

  private objectScope(recordName: string): ProbeScope {
    return {
      key: `object ${recordName}`,
      fieldSelector: `metadata.name=${escapeFieldValue(recordName)}`,
      cached: () => {
        const record = this.records.get(this.mapping.storageNamespace, recordName);
        return record === undefined ? [] : [record];
      },
    };
  }

  private namespacesScope(namespaces: readonly string[]): ProbeScope {
    const label = bookkeeping.namespaceLabel;
    return {
      key: `namespaces ${namespaces.join(',')}`,
      labelSelector: `${label} in (${namespaces.join(',')})`,
      cached: () => namespaces.flatMap((namespace) => this.records.byIndex(tenantNamespaceIndex.name, namespace)),
    };
  }

  private collectionScope(namespace: string | undefined): ProbeScope {
    const label = bookkeeping.namespaceLabel;
    if (namespace !== undefined) {
      return { key: `namespace ${namespace}`, labelSelector: `${label}=${namespace}`, cached: () => this.records.byIndex(tenantNamespaceIndex.name, namespace) };
    }
    return { key: 'all namespaces', labelSelector: label, cached: () => this.records.list().filter((r) => r.metadata.labels?.[label] !== undefined) };
  }
}
