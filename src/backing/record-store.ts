/**
 * Storage of one virtual resource in backing records, and the only place
 * that reads or writes them for API requests.
 *
 * Consistency: kube-apiserver's records are the truth. GET, and LIST
 * without limit or continue, with resourceVersion unset or NotOlderThan, are
 * answered from memory once a fence has shown the records cache is fresh
 * for the read's scope (cached-reads.ts, consistent-read.ts), so they
 * never miss a write acknowledged before they started, on any replica;
 * so are consistent paginated lists, their later pages from a snapshot of
 * the first page's state; resourceVersion=0 is served from memory at once.
 * Exact reads, a limit with a resourceVersion, a page whose snapshot this
 * replica does not hold and reads the cache cannot answer in time go to
 * kube-apiserver. The
 * memory is the hub, fed from the process's shared records informer, which
 * also feeds every tenant watch. Lists
 * push the request's label selector down to kube-apiserver; which claims
 * are selected is decided by the REST layer's SelectionPredicate on every
 * path (api/rest/selection.ts). Writes go
 * to kube-apiserver with the caller's resourceVersion, so optimistic
 * concurrency is kube's own; nothing is retried behind the caller's back
 * except a patch, which is re-applied to fresh state exactly as
 * kube-apiserver does when the patch carries no resourceVersion.
 */
import { checkPathSegmentName } from '../api/request-info.js';
import { badRequest, conflict, deleteUidMismatch, internalError, notFound, type GroupResource } from '../api/status.js';
import { compareStorageKeys, revision, type ApiObject, type ObjectList } from '../api/rest/types.js';
import { escapeFieldValue } from '../api/field-selector.js';
import type { ContinueTokens, ListIdentity } from './continue-token.js';
import { CachedReads } from './cached-reads.js';
import { NamespaceLifecycle } from './namespace-lifecycle.js';
import type { ProbeMethod } from './scope-probe.js';
import type { BackingResource, SharedInformer, SharedInformerFactory } from './shared-informers.js';
import { applyRefusal, renamer, translateBackingError, type VirtualTarget } from './errors.js';
import type { KubeClient, KubeStatus } from './kube-client.js';
import { backingName, bookkeeping, virtualUid, type StorageMapping } from './storage-mapping.js';
import type { SelectionPredicate } from '../api/rest/selection.js';
import type { WatchHub } from '../api/rest/watch-hub.js';
import type { DeleteOptions, Deleted, ListQuery, WritableStore, WriteQuery, Written } from '../api/rest/store.js';
import { unobservedFences, type FenceObservers } from '../observability/consistent-read-metrics.js';
import { standaloneReplica, type ReplicaConsistency } from './replica-watermarks.js';

export class RecordStore implements WritableStore {
  private records: SharedInformer<ApiObject> | undefined;
  /** Reads answered from memory once the records cache is known to be fresh; set by start(). */
  private cachedReads: CachedReads | undefined;
  private removeHandler: (() => void) | undefined;
  private readonly collectionPath: string;
  private readonly namespaceLifecycle: NamespaceLifecycle;
  /** Listed, added, modified or deleted (newestRecordRevision). */
  private newestRecord = -1n;

  constructor(
    private readonly client: KubeClient,
    private readonly informers: SharedInformerFactory,
    readonly mapping: StorageMapping,
    private readonly backingPlural: string,
    readonly gr: GroupResource,
    readonly hub: WatchHub,
    private readonly continueTokens: ContinueTokens,
    /** The namespaces' shared cache, which namespace admission reads first (namespace-lifecycle.ts). */
    namespaces: BackingResource,
    private readonly fenceObservers: FenceObservers = () => unobservedFences,
    /** The replicas' watermarks: what every write acknowledges and consistent reads wait for. */
    private readonly replicas: ReplicaConsistency = standaloneReplica,
  ) {
    this.collectionPath = `/apis/${mapping.backing.group}/${mapping.backing.version}/namespaces/${mapping.storageNamespace}/${backingPlural}`;
    this.namespaceLifecycle = new NamespaceLifecycle(client, informers, namespaces, gr, (error, namespace) => translateBackingError(error, mapping, this.target(namespace, '')));
  }

  /**
   * How every reader's fence probes the records: our CRD, its records in one
   * namespace, so as a Table of names and resourceVersions (scope-probe.ts).
   */
  get probe(): ProbeMethod {
    return { kind: 'table', namespace: this.mapping.storageNamespace };
  }

  /** The records' shared cache; asked for once the backing CRD is installed (before, the list would only fail). */
  get resource(): BackingResource {
    return { path: this.collectionPath };
  }

  /** Feeds the hub from the records' shared informer: every (re)list resets it, every event is published. */
  start(): void {
    if (this.records !== undefined) return;
    const records = this.informers.informerFor<ApiObject>(this.resource);
    this.records = records;
    const { mapping, hub } = this;
    this.removeHandler = records.addEventHandler({
      onReplace: (objects, resourceVersion) => {
        for (const record of objects) this.sawRecord(record);
        hub.reset(resourceVersion, objects.map((r) => mapping.toVirtual(r)).filter((o): o is ApiObject => o !== undefined));
      },
      onAdd: (record) => {
        this.publish('ADDED', record);
      },
      onUpdate: (_, record) => {
        this.publish('MODIFIED', record);
      },
      onDelete: (record) => {
        this.publish('DELETED', record);
      },
      onProgress: (resourceVersion) => {
        hub.progress(resourceVersion);
      },
    });
    this.cachedReads = new CachedReads(this.client, records, hub, mapping, this.continueTokens, this.probe, this.fenceObservers(this.collectionPath), this.replicas);
  }

  stop(): void {
    this.removeHandler?.();
  }

  hasSynced(): boolean {
    return this.records?.hasSynced() ?? false;
  }

  /**
   * The newest record revision the cache has held (-1 before any): what this replica may have shown anyone. Never a
   * bookmark's or a list's, so every other replica's cache reaches it through its own events (replica-watermarks.ts).
   */
  newestRecordRevision(): bigint {
    return this.newestRecord;
  }

  private sawRecord(record: ApiObject): void {
    const recordRevision = revision(record.metadata.resourceVersion);
    if (recordRevision > this.newestRecord) this.newestRecord = recordRevision;
  }

  /** kube-apiserver's current revision of the records: a consistent list of at most one record's version. */
  async currentRevision(): Promise<bigint> {
    return revision((await this.client.listVersions(this.collectionPath, { limit: '1' })).resourceVersion);
  }

  private publish(type: 'ADDED' | 'MODIFIED' | 'DELETED', record: ApiObject): void {
    // A deletion's object carries the deletion's revision.
    this.sawRecord(record);
    const object = this.mapping.toVirtual(record);
    if (object !== undefined) this.hub.publish({ type, object });
    else if (record.metadata.resourceVersion !== undefined) this.hub.progress(record.metadata.resourceVersion);
  }

  async get(namespace: string, name: string, resourceVersion: string | undefined): Promise<ApiObject> {
    const target = this.target(namespace, name);
    if (resourceVersion === '0') {
      const cached = this.hub.get(namespace, name);
      if (cached === undefined) throw notFound(target.gr, target.name);
      return cached;
    }
    const cachedReads = this.cachedReads;
    const fromMemory = cachedReads === undefined ? undefined : await this.backing(target, () => cachedReads.get(namespace, name, resourceVersion));
    if (fromMemory !== undefined) {
      if ('found' in fromMemory) return fromMemory.found;
      throw notFound(target.gr, target.name);
    }
    const record = await this.backing(target, () =>
      this.client.get<ApiObject>(this.recordPath(target), { resourceVersion }),
    );
    const object = this.mapping.toVirtual(record);
    // A record that does not name this claim is not it: no such object, as the cache and lists answer.
    if (!isVirtualTarget(object, target)) throw notFound(target.gr, target.name);
    return object;
  }

  async list(namespace: string | undefined, query: ListQuery): Promise<ObjectList> {
    if (query.resourceVersion === '0' && query.continue === undefined && query.resourceVersionMatch !== 'Exact') {
      return this.listFromCache(namespace);
    }
    const target = this.target(namespace ?? '', '');
    const name = query.selection.matchesSingle();
    const labelSelector = query.selection.label.isEverything() ? undefined : query.selection.label.toString();
    const identity: ListIdentity = { namespace: namespace ?? '', labelSelector, name };
    const cachedReads = this.cachedReads;
    const fromMemory = cachedReads === undefined ? undefined : await this.backing(target, () => cachedReads.list(namespace, query, identity));
    if (fromMemory !== undefined) return fromMemory;
    const kubeContinue = query.continue === undefined ? undefined : await this.continueTokens.unwrap(query.continue, identity);
    const list = await this.backing(target, () =>
      this.client.get<ObjectList>(this.collectionPath, {
        labelSelector: recordLabelSelector(namespace, query.selection),
        fieldSelector: name === undefined || namespace === undefined ? undefined : `metadata.name=${escapeFieldValue(backingName(namespace, name))}`,
        limit: query.limit,
        continue: kubeContinue,
        resourceVersion: query.resourceVersion,
        resourceVersionMatch: query.resourceVersionMatch,
      }),
    );
    // Records come in record-name order, which is kube's order for the claims except for digest names.
    const items = list.items
      .map((record) => this.mapping.toVirtual(record))
      .filter((o): o is ApiObject => o !== undefined)
      .sort(compareStorageKeys);
    const next = list.metadata.continue;
    return {
      apiVersion: this.mapping.virtualApiVersion,
      kind: `${this.mapping.virtual.kind}List`,
      metadata: {
        ...list.metadata,
        ...(next === undefined || next === '' ? {} : { continue: await this.continueTokens.wrap(next, list.items.at(-1), identity) }),
      },
      items,
    };
  }

  /** From memory (resourceVersion "0", or behind one fence for all of them); undefined: list each namespace. */
  async listNamespaces(namespaces: readonly string[], query: ListQuery): Promise<ObjectList | undefined> {
    if (query.resourceVersion === '0' && query.continue === undefined && query.resourceVersionMatch !== 'Exact') {
      return {
        apiVersion: this.mapping.virtualApiVersion,
        kind: `${this.mapping.virtual.kind}List`,
        metadata: { resourceVersion: this.hub.currentResourceVersion() },
        items: namespaces.flatMap((namespace) => this.hub.list(namespace)),
      };
    }
    const cachedReads = this.cachedReads;
    return cachedReads === undefined ? undefined : this.backing(this.target('', ''), () => cachedReads.listNamespaces(namespaces, query));
  }

  async create(namespace: string, object: ApiObject, query: WriteQuery): Promise<Written> {
    const name = object.metadata.name ?? '';
    const target = this.target(namespace, name);
    await this.namespaceLifecycle.admit(namespace, name);
    const response = await this.written(target, query, () =>
      this.client.call<ApiObject>('POST', this.collectionPath, {
        body: this.mapping.toBacking(object, namespace),
        query: writeParams(query),
      }),
    );
    return { object: this.virtualOf(response.body, target), warnings: response.warnings.map(renamer(this.mapping, target)) };
  }

  /** PUT of the whole object (or of its status), keeping the record's infrastructure finalizers and annotations. */
  async update(namespace: string, object: ApiObject, subresource: '' | 'status', query: WriteQuery): Promise<Written> {
    const name = object.metadata.name ?? '';
    const target = this.target(namespace, name);
    const current = await this.record(target);
    this.checkUid(target, object.metadata.uid, current);
    const record = this.mapping.toBacking(object, namespace, this.mapping.internalState(current));
    const path = this.recordPath(target, subresource);
    const response = await this.written(target, query, () => this.client.call<ApiObject>('PUT', path, { body: record, query: writeParams(query) }));
    return { object: this.virtualOf(response.body, target), warnings: response.warnings.map(renamer(this.mapping, target)) };
  }

  /** Server-side apply, delegated to kube-apiserver's field manager on the record. */
  async apply(namespace: string, name: string, configuration: ApiObject, subresource: '' | 'status', query: WriteQuery): Promise<Written> {
    const target = this.target(namespace, name);
    await this.namespaceLifecycle.admit(namespace, name);
    const record = this.mapping.toBacking({ ...configuration, metadata: { ...configuration.metadata, name } }, namespace);
    Reflect.deleteProperty(record.metadata, 'finalizers');
    const path = this.recordPath(target, subresource);
    const response = await this.written(target, query, () =>
      this.client
        .call<ApiObject>('PATCH', path, {
          body: record,
          contentType: 'application/apply-patch+yaml',
          query: { ...writeParams(query), force: query.force },
        })
        .catch((error: unknown) => {
          throw applyRefusal(error, this.mapping, target, configuration.metadata.namespace ?? '') ?? error;
        }),
    );
    return { object: this.virtualOf(response.body, target), warnings: response.warnings.map(renamer(this.mapping, target)) };
  }

  async delete(namespace: string, name: string, options: DeleteOptions): Promise<Deleted> {
    const target = this.target(namespace, name);
    const preconditions = await this.backingPreconditions(target, options.preconditions);
    const deleted = await this.written(target, options, async () => ({
      body: await this.client.request<ApiObject>('DELETE', this.recordPath(target), {
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          ...(preconditions === undefined ? {} : { preconditions }),
          ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: options.gracePeriodSeconds }),
          ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
        },
      }),
    }));
    const response = deleted.body;
    if (response.kind === 'Status') {
      const recordUid = (response as KubeStatus).details?.uid;
      return { kind: 'gone', name, ...(recordUid === undefined ? {} : { uid: virtualUid(recordUid) }) };
    }
    const object = this.virtualOf(response, target);
    const stillThere = (response.metadata.finalizers ?? []).length > 0 && options.dryRun === undefined;
    return stillThere ? { kind: 'pending', object } : { kind: 'gone', name, ...(object.metadata.uid === undefined ? {} : { uid: object.metadata.uid }) };
  }

  private record(target: VirtualTarget): Promise<ApiObject> {
    return this.backing(target, () => this.client.get<ApiObject>(this.recordPath(target)));
  }

  /** A virtual uid precondition, checked here and turned into the record's own uid for kube-apiserver. */
  private async backingPreconditions(
    target: VirtualTarget,
    preconditions: DeleteOptions['preconditions'],
  ): Promise<{ uid?: string; resourceVersion?: string } | undefined> {
    if (preconditions?.uid === undefined) return preconditions;
    const current = await this.record(target);
    const actual = virtualUid(current.metadata.uid ?? '');
    if (preconditions.uid !== '' && preconditions.uid !== actual) {
      // The generic store's BeforeDelete words it with the kind, as for a resourceVersion precondition.
      throw conflict({ group: target.gr.group, resource: this.mapping.virtual.kind }, target.name, deleteUidMismatch(preconditions.uid, actual));
    }
    return { ...preconditions, uid: current.metadata.uid };
  }

  private checkUid(target: VirtualTarget, uid: string | undefined, current: ApiObject): void {
    const actual = virtualUid(current.metadata.uid ?? '');
    if (uid === undefined || uid === '' || uid === actual) return;
    throw conflict(target.gr, target.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${actual}`);
  }

  /** The namespace's state as the hub holds it; the REST layer applies the selection. */
  private listFromCache(namespace: string | undefined): ObjectList {
    return {
      apiVersion: this.mapping.virtualApiVersion,
      kind: `${this.mapping.virtual.kind}List`,
      metadata: { resourceVersion: this.hub.currentResourceVersion() },
      items: this.hub.list(namespace),
    };
  }

  /** Encoded: a name read from a request path may hold `?`, `#` or spaces, which must stay in the one segment. */
  private recordPath(target: VirtualTarget, subresource: '' | 'status' = ''): string {
    return `${this.collectionPath}/${encodeURIComponent(target.backingName)}${subresource === '' ? '' : `/${subresource}`}`;
  }

  /** The record a request is about; like kube's key function, a name that cannot be a path segment is a 400 first. */
  private target(namespace: string, name: string): VirtualTarget {
    if (name !== '') checkPathSegmentName(name);
    return {
      gr: this.gr,
      backingPlural: this.backingPlural,
      namespace,
      name,
      backingName: name === '' ? '' : backingName(namespace, name),
    };
  }

  private virtualOf(record: ApiObject, target: VirtualTarget): ApiObject {
    const object = this.mapping.toVirtual(record);
    // A record whose bookkeeping does not name this (namespace, name) is a digest collision or tampering: never written over.
    if (!isVirtualTarget(object, target)) throw internalError('storage record does not match the requested object');
    return object;
  }

  /**
   * A record write, admitted and acknowledged through the replica
   * watermarks (replica-watermarks.ts), so that a read on any replica
   * started after the answer sees it; a dry run writes nothing. A deletion
   * answered with a Status names no revision: the watermark then takes
   * kube-apiserver's current one.
   */
  private async written<R extends { readonly body: ApiObject }>(target: VirtualTarget, query: { readonly dryRun?: readonly string[] }, call: () => Promise<R>): Promise<R> {
    if (query.dryRun !== undefined) return this.backing(target, call);
    this.replicas.admit();
    const response = await this.backing(target, call);
    await this.replicas.acknowledged(response.body.kind === 'Status' ? undefined : response.body.metadata.resourceVersion);
    return response;
  }

  private async backing<T>(target: VirtualTarget, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw translateBackingError(error, this.mapping, target);
    }
  }
}

function isVirtualTarget(object: ApiObject | undefined, target: VirtualTarget): object is ApiObject {
  return object?.metadata.namespace === target.namespace && object.metadata.name === target.name;
}

/**
 * What a record list asks kube-apiserver for: the namespace label (every
 * record query is scoped by it) and the tenant's label selector, which
 * matches records as it matches claims because tenant labels are stored as
 * they are and tenants cannot select on reserved keys. It only narrows the
 * read (and keeps kube's pages full); the predicate decides on the claims.
 */
function recordLabelSelector(namespace: string | undefined, selection: SelectionPredicate): string {
  const scope = namespace === undefined ? bookkeeping.namespaceLabel : `${bookkeeping.namespaceLabel}=${namespace}`;
  return selection.label.isEverything() ? scope : `${scope},${selection.label.toString()}`;
}

function writeParams(query: WriteQuery): Record<string, string | undefined> {
  if (query.dryRun !== undefined && query.dryRun.some((v) => v !== 'All')) {
    throw badRequest(`Invalid dry run value: ${query.dryRun.join(',')}. Supported values: All`);
  }
  return {
    dryRun: query.dryRun?.length === 1 ? 'All' : undefined,
    fieldManager: query.fieldManager,
    fieldValidation: query.fieldValidation,
  };
}
