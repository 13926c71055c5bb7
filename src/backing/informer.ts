/**
 * List-then-watch of one kind of object, like client-go's reflector
 * (tools/cache/reflector.go): it relists on 410 Expired, resumes from the last
 * resourceVersion after a normal watch end, and backs off on errors instead
 * of stopping (client-node's informer stops for good on a non-410 error).
 * Like client-go's reflector, a watch that ends within a second without an
 * event counts as a failure and backs off (a watch kube-apiserver cannot
 * serve would otherwise be re-opened in a tight loop).
 * It keeps no objects: it reports lists, events and bookmarks to its
 * handlers, and the shared informer above it (shared-informers.ts) holds the
 * one cache of the resource.
 */
import { KubeApiError, type KubeClient, type Representation, type WatchEvent } from './kube-client.js';

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
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items: T[] | null;
}

/** client-go's pager (tools/pager defaultPageSize). */
export const listPageSize = 500;

/** A list's continuation answered 410: its snapshot is gone. */
class ContinuationExpired extends Error {}

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
  /**
   * 'metadata' caches only names, labels and resourceVersions, like
   * client-go's metadata informer: for kinds whose content must not be held
   * (Secrets). The list and the watch each ask for their own kind.
   */
  readonly representation?: Representation;
}

/** What an informer needs of the kube client. */
export type ListWatchClient = Pick<KubeClient, 'list' | 'watch'>;

const minBackoffMs = 800;
const maxBackoffMs = 30_000;
/** client-go's reflector: a shorter watch without any event is an error ("very short watch"). */
const shortWatchMs = 1000;

export class Informer<T extends KubeObject> {
  private resourceVersion = '';
  /** No list or watch has failed since the last one that succeeded. */
  private healthy = false;
  private readonly abort = new AbortController();
  /** Aborted by retryNow() to end the current backoff wait. */
  private retry = new AbortController();

  constructor(
    private readonly client: ListWatchClient,
    private readonly options: InformerOptions,
    private readonly handlers: InformerHandlers<T> = {},
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  /**
   * Ends a backoff wait now: the caller has seen kube-apiserver answer
   * again (backend-probe.ts), so waiting out up to 30 s would only delay
   * the watch's resumption.
   */
  retryNow(): void {
    this.retry.abort();
  }

  private stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /**
   * The last list succeeded and no watch has failed since: what it reports
   * keeps up with kube-apiserver. False while it backs off after a failure.
   */
  isHealthy(): boolean {
    return this.healthy;
  }

  private async run(): Promise<void> {
    let backoffMs = minBackoffMs;
    while (!this.abort.signal.aborted) {
      let failure: unknown;
      try {
        if (this.resourceVersion === '') await this.relist();
        const watched = await this.watchOnce();
        if (watched.events > 0 || watched.durationMs >= shortWatchMs) {
          backoffMs = minBackoffMs;
          continue;
        }
        failure = new Error(`very short watch on ${this.options.path}: closed after ${watched.durationMs} ms without an event`);
      } catch (error) {
        if (this.stopped()) return;
        if (isExpired(error)) {
          this.resourceVersion = '';
          continue;
        }
        failure = error;
      }
      this.healthy = false;
      this.handlers.onError?.(failure);
      this.retry = new AbortController();
      await delay(jitter(backoffMs), AbortSignal.any([this.abort.signal, this.retry.signal]));
      backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
    }
  }

  /**
   * A consistent list in pages of `listPageSize`, as client-go's reflector
   * lists through its pager: one answer of 10,000 hosts with their hardware
   * is ~100 MB of text the process would hold at once (and malloc keep), a
   * page a few MB. Every page is of the first page's snapshot. A
   * continuation whose snapshot was compacted meanwhile (410) falls back to
   * one list without a limit, as the pager's FullListIfExpired does.
   */
  private async relist(): Promise<void> {
    let list: ObjectList<T>;
    try {
      list = await this.listInPages();
    } catch (error) {
      if (!(error instanceof ContinuationExpired)) throw error;
      list = await this.listPage(undefined, undefined);
    }
    this.resourceVersion = list.metadata.resourceVersion ?? '';
    this.healthy = true;
    this.handlers.onList?.(list.items ?? [], this.resourceVersion);
  }

  private async listInPages(): Promise<ObjectList<T>> {
    const first = await this.listPage(listPageSize, undefined);
    // An empty PartialObjectMetadataList has `items: null`.
    const items = first.items ?? [];
    for (let token = first.metadata.continue; token !== undefined && token !== ''; ) {
      const page = await this.listPage(listPageSize, token).catch((error: unknown) => {
        throw isExpired(error) ? new ContinuationExpired() : error;
      });
      for (const item of page.items ?? []) items.push(item);
      token = page.metadata.continue;
    }
    return { metadata: first.metadata, items };
  }

  private listPage(limit: number | undefined, token: string | undefined): Promise<ObjectList<T>> {
    const query = { ...this.selectors(), limit: limit === undefined ? undefined : String(limit), continue: token };
    return this.client.list<ObjectList<T>>(this.options.path, query, this.representation(), this.abort.signal);
  }

  /** One watch from the current resourceVersion until the server ends it; how long it lasted and what it delivered. */
  private async watchOnce(): Promise<{ readonly events: number; readonly durationMs: number }> {
    const timeoutSeconds = String(300 + Math.floor(Math.random() * 300));
    const startedAt = Date.now();
    let events = 0;
    await this.client.watch<T>(
      this.options.path,
      { ...this.selectors(), resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds },
      (event) => {
        events += 1;
        this.apply(event);
      },
      { signal: this.abort.signal, representation: this.representation() },
    );
    return { events, durationMs: Date.now() - startedAt };
  }

  private representation(): Representation {
    return this.options.representation ?? 'full';
  }

  private apply(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') {
      const status = event.object as unknown as { code?: number; reason?: string; message?: string };
      throw new KubeApiError(status.code ?? 500, { kind: 'Status', ...status });
    }
    const meta = event.object.metadata;
    if (meta.resourceVersion !== undefined) this.resourceVersion = meta.resourceVersion;
    this.healthy = true;
    if (event.type === 'BOOKMARK') {
      this.handlers.onBookmark?.(this.resourceVersion);
      return;
    }
    this.handlers.onEvent?.({ type: event.type, object: event.object });
  }

  private selectors(): Record<string, string | undefined> {
    return { fieldSelector: this.options.fieldSelector, labelSelector: this.options.labelSelector };
  }
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
