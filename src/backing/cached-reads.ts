/**
 * Reads of a record-backed resource answered from memory, as kube-apiserver
 * answers them from its watch cache (k8s.io/apiserver pkg/storage/cacher:
 * cacher.go GetList/Get, delegator.go ShouldDelegateList;
 * KEP-2340 consistent reads from cache).
 *
 * - resourceVersion unset (a consistent read): once the cache has reached
 *   the highest write watermark of the replicas (replica-watermarks.ts),
 *   or, when they cannot tell, after the fence (consistent-read.ts) for the
 *   read's scope: the one record for a GET or a
 *   list pinned to one name, the tenant namespace's records for a
 *   namespaced LIST (probed together with the namespaces other LISTs ask
 *   for meanwhile), every claim record for a cluster-wide one.
 * - resourceVersion X (GET, or LIST NotOlderThan): from memory once the
 *   cache has reached X; a cache below X is fenced like a consistent read,
 *   whose resourceVersion is then at least X unless X is in the future.
 *
 * - limit, resourceVersion unset: the first page after the fence, the rest
 *   of the selected objects kept as a snapshot (list-snapshots.ts); a
 *   continue token of that list reads its next page from the snapshot, at
 *   the first page's resourceVersion, as kube's cacher serves pages from
 *   its store snapshots. The token names the resourceVersion and the last
 *   object, so a replica without the snapshot reads the page from
 *   kube-apiserver at that resourceVersion instead.
 *
 * Everything else (Exact; a limit with a resourceVersion, which kube reads
 * from etcd too) is kube-apiserver's, and so is every read the cache cannot
 * answer in time (its watch broken, or lagging beyond the fence's wait):
 * `undefined` tells the caller to ask it.
 *
 * The objects come from the resource's WatchHub, which the same informer
 * handler feeds in the same turn as the records cache the fence looks at,
 * so what the fence approved is what is read.
 */
import { compareStorageKeys, revision, storageKey, type ApiObject, type ObjectList } from '../api/rest/types.js';
import type { SelectionPredicate } from '../api/rest/selection.js';
import type { WatchHub } from '../api/rest/watch-hub.js';
import type { ListQuery } from '../api/rest/store.js';
import { escapeFieldValue } from '../api/field-selector.js';
import { ConsistentReadFence, type Freshness, type ProbeScope, type ScopeBatch } from './consistent-read.js';
import type { ProbeClient, ProbeMethod } from './scope-probe.js';
import type { SharedInformer } from './shared-informers.js';
import type { ContinueTokens, ListIdentity, ListPosition } from './continue-token.js';
import { ListSnapshots } from './list-snapshots.js';
import { unobservedFences, type FenceObserver } from '../observability/consistent-read-metrics.js';
import { backingName, bookkeeping, type StorageMapping } from './storage-mapping.js';
import { standaloneReplica, type FreshnessTargets } from './replica-watermarks.js';

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
  private readonly snapshots = new ListSnapshots();
  private readonly namespaceBatch: ScopeBatch = {
    key: 'namespaces',
    maxMembers: maxNamespacesPerProbe,
    scopeOf: (namespaces) => this.namespacesScope([...namespaces].sort()),
  };

  constructor(
    client: ProbeClient,
    private readonly records: SharedInformer<ApiObject>,
    private readonly hub: WatchHub,
    private readonly mapping: StorageMapping,
    private readonly tokens: ContinueTokens,
    probe: ProbeMethod,
    observer: FenceObserver = unobservedFences,
    /** Replica watermarks, when they can vouch for the cache without a probe. */
    private readonly targets: FreshnessTargets = standaloneReplica,
  ) {
    records.addIndexer(tenantNamespaceIndex.name, tenantNamespaceIndex.fn);
    this.fence = new ConsistentReadFence(client, records, { probe, observer });
  }

  async get(namespace: string, name: string, resourceVersion: string | undefined): Promise<CachedGet> {
    const recordName = backingName(namespace, name);
    const at = await this.freshAt(() => this.fence.fence(this.objectScope(recordName)), resourceVersion);
    if (at === undefined) return undefined;
    const record = this.records.get(this.mapping.storageNamespace, recordName);
    if (record === undefined) return { absent: true };
    const object = this.hub.get(namespace, name);
    // A record that does not map to this claim (a digest collision, tampering) is for kube-apiserver's path to refuse.
    if (object === undefined || object.metadata.resourceVersion !== record.metadata.resourceVersion) return undefined;
    return { found: object };
  }

  /** undefined: not servable from memory (Exact, a limit with a resourceVersion, a page whose snapshot is gone), or the cache could not answer in time. */
  async list(namespace: string | undefined, query: ListQuery, identity: ListIdentity): Promise<ObjectList | undefined> {
    if (query.resourceVersionMatch === 'Exact') return undefined;
    if (query.continue !== undefined) return this.nextPage(query.continue, query, identity);
    if (query.limit !== undefined && query.resourceVersion !== undefined) return undefined;
    const name = query.selection.matchesSingle();
    const at = await this.freshAt(this.listFence(namespace, name), query.resourceVersion);
    if (at === undefined) return undefined;
    const items = (
      name !== undefined && namespace !== undefined ? [this.hub.get(namespace, name)].filter((o): o is ApiObject => o !== undefined) : this.hub.list(namespace)
    ).sort(compareStorageKeys);
    if (query.limit === undefined) return this.listOf(at, items);
    const selected = items.filter((object) => query.selection.matches(object));
    return this.page(selected, 0, Number(query.limit), at, identity, query.selection);
  }

  /** The page after the token's position, from the snapshot of its list; undefined when this replica has none. */
  private async nextPage(token: string, query: ListQuery, identity: ListIdentity): Promise<ObjectList | undefined> {
    const position = await this.tokens.open(token, identity);
    const at = String(position.rv);
    const selected = this.snapshots.get(snapshotKey(at, identity, query.selection));
    if (selected === undefined) return undefined;
    const limit = query.limit === undefined ? Infinity : Number(query.limit);
    return this.page(selected, firstAfter(selected, position), limit, at, identity, query.selection);
  }

  /**
   * `limit` objects from `start`, and a continue token when more remain,
   * with their count when nothing is selected (kube counts only then:
   * etcd3 store GetList, `pred.Empty()`). The selection is kept for the
   * token's pages only when a token is issued: a list that fits in one page
   * leaves nothing behind.
   */
  private async page(
    selected: readonly ApiObject[],
    start: number,
    limit: number,
    at: string,
    identity: ListIdentity,
    selection: SelectionPredicate,
  ): Promise<ObjectList> {
    const items = selected.slice(start, start + limit);
    const remaining = selected.length - start - items.length;
    const last = items.at(-1);
    if (remaining === 0 || last === undefined) return this.listOf(at, items);
    this.snapshots.put(snapshotKey(at, identity, selection), selected);
    const after = { namespace: last.metadata.namespace ?? '', name: last.metadata.name ?? '' };
    const token = await this.tokens.issue({ rv: Number(at), after }, identity);
    return this.listOf(at, items, { continue: token, ...(selection.empty() ? { remainingItemCount: remaining } : {}) });
  }

  private listOf(at: string, items: ApiObject[], more: { continue?: string; remainingItemCount?: number } = {}): ObjectList {
    return {
      apiVersion: this.mapping.virtualApiVersion,
      kind: `${this.mapping.virtual.kind}List`,
      metadata: { resourceVersion: at, ...more },
      items,
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
    const scope = sorted.length > maxNamespacesPerProbe ? this.collectionScope() : this.namespacesScope(sorted);
    const at = await this.freshAt(() => this.fence.fence(scope), query.resourceVersion);
    if (at === undefined) return undefined;
    return this.listOf(
      at,
      sorted.flatMap((namespace) => this.hub.list(namespace)),
    );
  }

  /**
   * The resourceVersion at which memory may answer for the scope, or
   * undefined to ask kube-apiserver. A client resourceVersion the cache
   * has reached needs no probe (NotOlderThan).
   */
  private async freshAt(fence: () => Promise<Freshness>, resourceVersion: string | undefined): Promise<string | undefined> {
    if (!this.records.hasSynced()) return undefined;
    const minimum = resourceVersion === undefined ? undefined : revision(resourceVersion);
    // Malformed: kube-apiserver's path answers it with the right error.
    if (minimum !== undefined && minimum < 0n) return undefined;
    const current = this.hub.currentResourceVersion();
    if (minimum !== undefined && revision(current) >= minimum) return current;
    const freshness = await this.proven(fence);
    if (!freshness.fresh) return undefined;
    // A resourceVersion beyond the cluster's: kube-apiserver's path waits for it or answers 504.
    if (minimum !== undefined && revision(freshness.resourceVersion) < minimum) return undefined;
    return freshness.resourceVersion;
  }

  /** Fresh by the replicas' watermarks when they can tell (replica-watermarks.ts), else by probing the read's scope. */
  private async proven(probe: () => Promise<Freshness>): Promise<Freshness> {
    const target = await this.targets.target();
    return target === undefined ? probe() : this.fence.fenceAt(target);
  }

  /**
   * The fence of a list: its one record when pinned to a name; a
   * namespace's records, probed together with the other namespaces being
   * listed meanwhile (ScopeBatch); or every claim record.
   */
  private listFence(namespace: string | undefined, name: string | undefined): () => Promise<Freshness> {
    if (namespace === undefined) return () => this.fence.fence(this.collectionScope());
    if (name !== undefined) return () => this.fence.fence(this.objectScope(backingName(namespace, name)));
    return () => this.fence.fenceMember(this.namespaceBatch, namespace);
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
      labelSelector: namespaces.length === 1 ? `${label}=${namespaces.join('')}` : `${label} in (${namespaces.join(',')})`,
      cached: () => namespaces.flatMap((namespace) => this.records.byIndex(tenantNamespaceIndex.name, namespace)),
    };
  }

  /** Every claim record. */
  private collectionScope(): ProbeScope {
    const label = bookkeeping.namespaceLabel;
    return { key: 'all namespaces', labelSelector: label, cached: () => this.records.list().filter((r) => r.metadata.labels?.[label] !== undefined) };
  }
}

/** A snapshot is of one list (namespace, selectors, name) at one resourceVersion. */
function snapshotKey(at: string, identity: ListIdentity, selection: SelectionPredicate): string {
  return JSON.stringify([at, identity.namespace, identity.name ?? '', selection.label.toString(), selection.field.toString()]);
}

/** The index of the first object after the position's, in key order (binary search). */
function firstAfter(selected: readonly ApiObject[], position: ListPosition): number {
  const after = storageKey(position.after.namespace, position.after.name);
  let low = 0;
  let high = selected.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const object = selected[middle];
    if (object !== undefined && storageKey(object.metadata.namespace, object.metadata.name) <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}
