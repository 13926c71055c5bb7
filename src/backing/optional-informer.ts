/**
 * An informer on a resource another project installs (metal3.io CRDs without
 * baremetal-operator): while kube-apiserver answers 404 for it, it reads as
 * empty and counts as synced, so what depends on it can still serve. The
 * informer keeps retrying with its backoff and picks the CRD up once installed.
 */
import { Informer, type InformerHandlers, type InformerOptions, type KubeObject } from './informer.js';
import { KubeApiError, type KubeClient } from './kube-client.js';

export interface OptionalInformerHandlers<T> extends InformerHandlers<T> {
  /** The resource is not served any more (or was not at the first try): its objects are gone. */
  readonly onAbsent?: () => void;
}

export class OptionalInformer<T extends KubeObject> {
  private readonly informer: Informer<T>;
  private absent = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(client: KubeClient, options: InformerOptions, handlers: OptionalInformerHandlers<T>) {
    this.informer = new Informer<T>(client, options, {
      onList: (objects, resourceVersion) => {
        this.absent = false;
        this.markSynced();
        handlers.onList?.(objects, resourceVersion);
      },
      onEvent: (event) => {
        this.absent = false;
        handlers.onEvent?.(event);
      },
      onBookmark: (resourceVersion) => handlers.onBookmark?.(resourceVersion),
      onError: (error) => {
        if (isNotServed(error) && !this.absent) {
          this.absent = true;
          this.markSynced();
          handlers.onAbsent?.();
        }
        handlers.onError?.(error);
      },
    });
  }

  start(): void {
    this.informer.start();
  }

  stop(): void {
    this.informer.stop();
  }

  /** Loaded, or known not to be served. */
  hasSynced(): boolean {
    return this.absent || this.informer.hasSynced();
  }

  /** Resolves once loaded, or once known not to be served. */
  waitForSync(): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  list(): T[] {
    return this.absent ? [] : this.informer.list();
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.absent ? undefined : this.informer.get(namespace, name);
  }

  private markSynced(): void {
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }
}

/** kube-apiserver's answer for a resource it does not serve (no CRD). */
export function isNotServed(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 404;
}
