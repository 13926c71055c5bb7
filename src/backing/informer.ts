/**
 * List-then-watch cache of one kind of object, like client-go's reflector +
 * informer: it relists on 410 Expired, resumes from the last
 * resourceVersion after a normal watch end, and backs off on errors instead
 * of stopping (client-node's informer stops for good on a non-410 error).
 * The cache is derived state only: kube-apiserver stays the truth.
 */
import { KubeApiError, type KubeClient, type WatchEvent } from './kube-client.js';

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly resourceVersion?: string;
  readonly uid?: string;
}

export interface KubeObject {
  readonly metadata: ObjectMeta;
}

interface ObjectList<T> {
  readonly metadata: { readonly resourceVersion?: string };
  readonly items: T[] | null;
}

export interface InformerHandlers<T> {
  /** A complete (re)list: the new state replaces everything seen before. */
  readonly onList?: (objects: readonly T[], resourceVersion: string) => void;
  /** One change, in resourceVersion order, after the list it follows. */
  readonly onEvent?: (event: { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }) => void;
  /** The watch has seen everything up to this resourceVersion. */
  readonly onBookmark?: (resourceVersion: string) => void;
  readonly onError?: (error: unknown) => void;
}

export interface InformerOptions {
  /** Collection path, e.g. /api/v1/namespaces/kube-system/configmaps. */
  readonly path: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  /** e.g. metadataOnly, to watch only what changed, not the content (Secrets). */
  readonly accept?: string;
}

/** Accept header for metadata-only lists and watches (PartialObjectMetadata). */
export const metadataOnly = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

const minBackoffMs = 800;
const maxBackoffMs = 30_000;

export class Informer<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private resourceVersion = '';
  private synced = false;
  private readonly abort = new AbortController();
  private readonly syncWaiters: (() => void)[] = [];

  constructor(
    private readonly client: KubeClient,
    private readonly options: InformerOptions,
    private readonly handlers: InformerHandlers<T> = {},
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  private stopped(): boolean {
    return this.abort.signal.aborted;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves after the first complete list has been loaded. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  list(): T[] {
    return [...this.store.values()];
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(storeKey(namespace, name));
  }

  private async run(): Promise<void> {
    let backoffMs = minBackoffMs;
    while (!this.abort.signal.aborted) {
      try {
        if (this.resourceVersion === '') await this.relist();
        await this.watchOnce();
        backoffMs = minBackoffMs;
      } catch (error) {
        if (this.stopped()) return;
        if (isExpired(error)) {
          this.resourceVersion = '';
          continue;
        }
        this.handlers.onError?.(error);
        await delay(jitter(backoffMs), this.abort.signal);
        backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
      }
    }
  }

  private async relist(): Promise<void> {
    const list = await this.client.request<ObjectList<T>>('GET', this.options.path, { query: this.selectors(), accept: this.options.accept });
    this.store.clear();
    // An empty PartialObjectMetadataList has `items: null`.
    const items = list.items ?? [];
    for (const item of items) this.store.set(storeKey(item.metadata.namespace, item.metadata.name), item);
    this.resourceVersion = list.metadata.resourceVersion ?? '';
    this.handlers.onList?.(items, this.resourceVersion);
    this.markSynced();
  }

  private async watchOnce(): Promise<void> {
    const timeoutSeconds = String(300 + Math.floor(Math.random() * 300));
    await this.client.watch<T>(
      this.options.path,
      { ...this.selectors(), resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds },
      (event) => {
        this.apply(event);
      },
      this.abort.signal,
      this.options.accept,
    );
  }

  private apply(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') {
      const status = event.object as unknown as { code?: number; reason?: string; message?: string };
      throw new KubeApiError(status.code ?? 500, { kind: 'Status', ...status });
    }
    const meta = event.object.metadata;
    if (meta.resourceVersion !== undefined) this.resourceVersion = meta.resourceVersion;
    if (event.type === 'BOOKMARK') {
      this.handlers.onBookmark?.(this.resourceVersion);
      return;
    }
    const key = storeKey(meta.namespace, meta.name);
    if (event.type === 'DELETED') this.store.delete(key);
    else this.store.set(key, event.object);
    this.handlers.onEvent?.({ type: event.type, object: event.object });
  }

  private selectors(): Record<string, string | undefined> {
    return { fieldSelector: this.options.fieldSelector, labelSelector: this.options.labelSelector };
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }
}

function storeKey(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

function isExpired(error: unknown): boolean {
  return error instanceof KubeApiError && (error.statusCode === 410 || error.reason === 'Expired' || error.reason === 'Gone');
}

function jitter(ms: number): number {
  return ms * (1 + Math.random() * 0.2);
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
