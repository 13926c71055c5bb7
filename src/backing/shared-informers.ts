/**
 * Shared informers: one cache per backing resource per process, fed by one
 * list+watch and read by everyone who needs the resource (the REST layer's
 * record store, HardwareData, the binder), like client-go's
 * SharedInformerFactory (tools/cache/shared_informer.go, informers/factory.go)
 * with its indexer (tools/cache/thread_safe_store.go).
 *
 * - The factory creates at most one informer per (path, representation) and
 *   starts it when first asked for; asking again returns the same one.
 * - Readers register event handlers and remove them when done (the binder,
 *   per leadership term). A handler registered after the first list gets
 *   the current state replayed first, as client-go's AddEventHandler does.
 * - Indexes are named functions from an object to index values (by
 *   namespace, by consumer, ...); any reader may add one, at any time.
 * - Resources another project installs (metal3.io CRDs without
 *   baremetal-operator) are declared optional: while kube-apiserver answers
 *   404 for them they read as empty and count as synced, for every reader
 *   alike; the reflector keeps retrying and picks the CRD up once installed.
 *   A required resource (our own records, Namespaces, Secrets) is not synced
 *   until it could be listed.
 * - A resource may name a transform (client-go's SharedIndexInformer
 *   SetTransform): every listed and watched object passes through it before
 *   the cache keeps it, so fields no reader needs (managedFields, copies of
 *   the object in annotations) take no memory. Readers see only the
 *   transformed object.
 * - Every cached object's string values are interned (interned-strings.ts):
 *   equal values in thousands of objects (apiVersions, hardware models,
 *   condition messages) are kept once, and so is each distinct managedFields
 *   field set (shared-field-sets.ts).
 */
import { CacheIndex, type IndexFunc } from './cache-index.js';
import { Informer, type KubeObject, type ListWatchClient, type ObjectMeta } from './informer.js';
import { internStrings } from './interned-strings.js';
import { KubeApiError, type Representation } from './kube-client.js';
import { shareFieldSets } from './shared-field-sets.js';

/** A backing resource, as the one key of its shared cache. */
export interface BackingResource {
  /** Collection path, e.g. /apis/metal3.io/v1alpha1/baremetalhosts. */
  readonly path: string;
  readonly representation?: Representation;
  /** Installed by another project: absent (404) reads as empty and synced. */
  readonly optional?: boolean;
  /**
   * What the cache keeps of each object (default: all of it). It must return
   * a new object rather than modify its argument, and keep metadata's
   * namespace, name and resourceVersion.
   */
  readonly transform?: (object: KubeObject) => KubeObject;
}

/**
 * What a reader is told, after the cache has changed. A handler that
 * mirrors the whole state (a watch hub) defines onReplace: it then gets the
 * complete state on registration, on every (re)list and when an optional
 * resource turns out not to be served, and onAdd/onUpdate/onDelete only for
 * watch events. Without onReplace, the registration replay comes as adds
 * (isInInitialList true) and a relist as the adds, updates and deletes it
 * implies, as client-go's DeltaFIFO Replace reports it.
 */
export interface ResourceEventHandler<T> {
  readonly onAdd?: (object: T, isInInitialList: boolean) => void;
  readonly onUpdate?: (oldObject: T, newObject: T) => void;
  /** The deleted object: the watch event's final state, or after a relist the last state seen. */
  readonly onDelete?: (object: T) => void;
  /** The complete state at resourceVersion ('' when the resource is not served). */
  readonly onReplace?: (objects: readonly T[], resourceVersion: string) => void;
  /** A bookmark: everything up to resourceVersion has been delivered. */
  readonly onProgress?: (resourceVersion: string) => void;
}

/** How the factory reports its informers' troubles (the caller logs them). */
export interface InformerReporter {
  /** A list or watch failed; the informer retries with backoff. */
  readonly onError: (resource: BackingResource, error: unknown) => void;
  /** An optional resource is not served (reported once per change of state). */
  readonly onNotServed: (resource: BackingResource) => void;
}

type Phase = 'unsynced' | 'synced' | 'absent';

export function objectKey(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

function keyOf(object: KubeObject): string {
  return objectKey(object.metadata.namespace, object.metadata.name);
}

export class SharedInformer<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexes = new Map<string, CacheIndex<T>>();
  private readonly handlers = new Set<ResourceEventHandler<T>>();
  private readonly changeListeners = new Set<() => void>();
  private readonly syncWaiters = new Set<() => void>();
  private readonly reflector: Informer<T>;
  private phase: Phase = 'unsynced';
  private resourceVersion = '';

  constructor(
    client: ListWatchClient,
    readonly resource: BackingResource,
    private readonly reporter: InformerReporter,
  ) {
    this.reflector = new Informer<T>(
      client,
      { path: resource.path, ...(resource.representation === undefined ? {} : { representation: resource.representation }) },
      {
        onList: (items, resourceVersion) => {
          this.replace(items.map((item) => this.transformed(item)), resourceVersion);
        },
        onEvent: ({ type, object }) => {
          this.apply(type, this.transformed(object));
        },
        onBookmark: (resourceVersion) => {
          this.progress(resourceVersion);
        },
        onError: (error) => {
          this.failed(error);
        },
      },
    );
  }

  start(): void {
    this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
  }

  /** See Informer.retryNow. */
  retryNow(): void {
    this.reflector.retryNow();
  }

  // ---- readers ------------------------------------------------------------

  /**
   * Registers a handler; returns the function that removes it. When the
   * cache has synced, the current state is replayed to it at once.
   */
  addEventHandler(handler: ResourceEventHandler<T>): () => void {
    this.handlers.add(handler);
    if (this.phase !== 'unsynced') {
      if (handler.onReplace !== undefined) handler.onReplace([...this.objects.values()], this.resourceVersion);
      else for (const object of this.objects.values()) handler.onAdd?.(object, true);
    }
    return () => {
      this.handlers.delete(handler);
    };
  }

  /** Adds a named index (an existing name keeps its first function). */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.has(name)) return;
    const index = new CacheIndex(fn);
    this.indexes.set(name, index);
    for (const [key, object] of this.objects) index.add(key, object);
  }

  /** The objects whose index `name` holds `value`. */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (index === undefined) throw new Error(`shared informer ${this.resource.path}: no index ${name}`);
    return index.get(value);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.objects.get(objectKey(namespace, name));
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  /** Listed, or (optional resource) known not to be served. */
  hasSynced(): boolean {
    return this.phase !== 'unsynced';
  }

  /** Resolves once synced, or when the signal aborts. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.hasSynced() || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.syncWaiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.syncWaiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** The optional resource is not served: the cache is empty on purpose. */
  isAbsent(): boolean {
    return this.phase === 'absent';
  }

  /** The newest resourceVersion the cache has reached ('' before the first list or while absent). */
  lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Synced, and its list+watch has not failed since it last succeeded: the cache keeps up. */
  isHealthy(): boolean {
    return this.phase === 'synced' && this.reflector.isHealthy();
  }

  /** Called after every change of the cache or of its resourceVersion (consistent reads wait on it). */
  addChangeListener(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => {
      this.changeListeners.delete(listener);
    };
  }

  // ---- feed from the reflector ----------------------------------------------

  private transformed(object: T): T {
    const { transform } = this.resource;
    return internStrings(shareFieldSets(transform === undefined ? object : (transform(object) as T)));
  }

  private replace(items: readonly T[], resourceVersion: string): void {
    const initial = this.phase === 'unsynced';
    const previous = new Map(this.objects);
    this.objects.clear();
    for (const index of this.indexes.values()) index.clear();
    for (const item of items) this.store(keyOf(item), item);
    this.resourceVersion = resourceVersion;
    this.phase = 'synced';
    this.notify((handler) => {
      if (handler.onReplace !== undefined) {
        handler.onReplace(items, resourceVersion);
        return;
      }
      for (const [key, object] of this.objects) {
        const old = previous.get(key);
        if (old === undefined) handler.onAdd?.(object, initial);
        else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) handler.onUpdate?.(old, object);
      }
      for (const [key, old] of previous) if (!this.objects.has(key)) handler.onDelete?.(old);
    });
    this.synced();
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: T): void {
    const key = keyOf(object);
    const old = this.objects.get(key);
    if (type === 'DELETED') this.unstore(key);
    else this.store(key, object);
    this.resourceVersion = object.metadata.resourceVersion ?? this.resourceVersion;
    this.notify((handler) => {
      if (type === 'DELETED') handler.onDelete?.(object);
      else if (old === undefined) handler.onAdd?.(object, false);
      else handler.onUpdate?.(old, object);
    });
  }

  private progress(resourceVersion: string): void {
    this.resourceVersion = resourceVersion;
    this.notify((handler) => handler.onProgress?.(resourceVersion));
  }

  private failed(error: unknown): void {
    if (this.resource.optional === true && isNotServed(error)) {
      if (this.phase === 'absent') return;
      this.reporter.onNotServed(this.resource);
      this.replace([], '');
      this.phase = 'absent';
      return;
    }
    this.reporter.onError(this.resource, error);
    this.changed();
  }

  /**
   * Runs every handler even when one throws (one reader's fault must not
   * starve the others), then rethrows the first error: the reflector fails
   * its watch, reports it and backs off, as before caches were shared.
   */
  private notify(call: (handler: ResourceEventHandler<T>) => void): void {
    let failure: Error | undefined;
    for (const handler of [...this.handlers]) {
      try {
        call(handler);
      } catch (error) {
        failure ??= error instanceof Error ? error : new Error('shared informer handler failed');
      }
    }
    this.changed();
    if (failure !== undefined) throw failure;
  }

  private changed(): void {
    for (const listener of [...this.changeListeners]) listener();
  }

  private synced(): void {
    for (const resolve of [...this.syncWaiters]) resolve();
  }

  private store(key: string, object: T): void {
    const old = this.objects.get(key);
    if (old !== undefined) for (const index of this.indexes.values()) index.remove(key, old);
    this.objects.set(key, object);
    for (const index of this.indexes.values()) index.add(key, object);
  }

  private unstore(key: string): void {
    const old = this.objects.get(key);
    if (old === undefined) return;
    this.objects.delete(key);
    for (const index of this.indexes.values()) index.remove(key, old);
  }
}

/** One informer per backing resource; informers start when first asked for. */
export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  private stopped = false;

  constructor(
    private readonly client: ListWatchClient,
    private readonly reporter: InformerReporter,
  ) {}

  informerFor<T extends KubeObject>(resource: BackingResource): SharedInformer<T> {
    if (this.stopped) throw new Error('shared informer factory is stopped');
    const key = `${resource.representation ?? 'full'} ${resource.path}`;
    const existing = this.informers.get(key);
    if (existing !== undefined) {
      if ((existing.resource.optional === true) !== (resource.optional === true)) {
        throw new Error(`shared informer ${resource.path}: asked for as both optional and required`);
      }
      if (existing.resource.transform !== resource.transform) {
        throw new Error(`shared informer ${resource.path}: asked for with two different transforms`);
      }
      return existing as unknown as SharedInformer<T>;
    }
    const informer = new SharedInformer<T>(this.client, resource, this.reporter);
    this.informers.set(key, informer as unknown as SharedInformer<KubeObject>);
    informer.start();
    return informer;
  }

  /** Every informer waiting out a backoff retries at once (kube-apiserver answers again). */
  retryNow(): void {
    for (const informer of this.informers.values()) informer.retryNow();
  }

  stop(): void {
    this.stopped = true;
    for (const informer of this.informers.values()) informer.stop();
  }
}

/** kube-apiserver's answer for a resource it does not serve (no CRD). */
export function isNotServed(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 404;
}

/**
 * The object without metadata.managedFields: field ownership is for
 * server-side apply, which no reader of a shared cache does (our writes
 * read the object fresh). About a third of a BareMetalHost's memory.
 */
export function withoutManagedFields<T extends KubeObject>(object: T): T {
  if (!('managedFields' in object.metadata)) return object;
  const { managedFields: _managedFields, ...metadata } = object.metadata as ObjectMeta & { managedFields?: unknown };
  return { ...object, metadata };
}

/** Index functions several readers share. */
export const indexers = {
  /** metadata.namespace ('' for cluster-scoped objects). */
  namespace: { name: 'namespace', fn: (object: KubeObject): readonly string[] => [object.metadata.namespace ?? ''] },
} as const;
