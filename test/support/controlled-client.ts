import type { KubeObject, ListWatchClient } from '../../src/backing/informer.js';
import type { WatchEvent } from '../../src/backing/kube-client.js';

/**
 * A kube client for unit tests of shared informers: lists answer
 * `state[path]` (or fail with `listError` while it is set); watches stay
 * open until the test pushes events (a 410 ERROR makes the informer
 * relist; a handler that throws ends its watch with the error, as
 * KubeClient.watch does); every list is recorded in `lists`.
 */
export class ControlledClient implements ListWatchClient {
  readonly state = new Map<string, { items: KubeObject[]; resourceVersion: string }>();
  readonly lists: string[] = [];
  listError: unknown;
  private readonly watchers = new Map<string, Set<(event: WatchEvent<KubeObject>) => void>>();

  list<T>(path: string): Promise<T> {
    this.lists.push(path);
    if (this.listError !== undefined) return Promise.reject(this.listError instanceof Error ? this.listError : new Error('list failed'));
    const { items, resourceVersion } = this.state.get(path) ?? { items: [], resourceVersion: '1' };
    return Promise.resolve({ metadata: { resourceVersion }, items } as T);
  }

  watch<T>(path: string, _query: unknown, onEvent: (event: WatchEvent<T>) => void, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    const send = onEvent as unknown as (event: WatchEvent<KubeObject>) => void;
    return new Promise((resolve, reject) => {
      const wrapped = (event: WatchEvent<KubeObject>): void => {
        try {
          send(event);
        } catch (error) {
          this.watchers.get(path)?.delete(wrapped);
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      };
      const set = this.watchers.get(path) ?? new Set();
      set.add(wrapped);
      this.watchers.set(path, set);
      options.signal?.addEventListener('abort', () => {
        set.delete(wrapped);
        resolve();
      });
    });
  }

  push(path: string, event: WatchEvent<KubeObject>): void {
    for (const send of [...(this.watchers.get(path) ?? [])]) send(event);
  }
}
