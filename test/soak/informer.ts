// A watch-fed cache, as client-go's reflector keeps one: LIST, then WATCH
// from the list's resourceVersion with bookmarks; a watch that ends is
// resumed from the last resourceVersion seen; 410 Expired relists. Used
// for the soak's watchers (which only count what they get) and for the
// final check, where the cache must equal a fresh LIST.
import type { SoakClient } from './client.js';
import type { ErrorLog } from './errors.js';

interface Item {
  metadata: { namespace?: string; name: string; resourceVersion: string };
}

interface WatchEvent {
  type: string;
  /** An object, a bookmark, or a Status (ERROR). */
  object: { metadata?: Partial<Item['metadata']>; code?: number; reason?: string };
}

export class Informer {
  readonly items = new Map<string, string>();
  events = 0;
  relists = 0;
  #resourceVersion = '';
  #running = false;
  #current: { close(): void } | undefined;
  #loop: Promise<void> | undefined;

  constructor(
    private readonly client: SoakClient,
    /** A collection path, e.g. /apis/…/namespaces/x/hostclaims. */
    private readonly collection: string,
    private readonly errors: ErrorLog,
    private readonly kind: string,
    /** Watch timeoutSeconds: kube-style random spread so watches do not all end together. */
    private readonly timeoutSeconds: () => number,
  ) {}

  start(): void {
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#current?.close();
    await this.#loop;
  }

  /** Lists again from scratch; the items are replaced. */
  async relist(): Promise<void> {
    const answer = await this.client.request('GET', this.collection);
    if (answer.status !== 200) throw new Error(`${answer.status}`);
    const list = JSON.parse(answer.body) as { items: Item[]; metadata: { resourceVersion: string } };
    this.items.clear();
    for (const item of list.items) this.items.set(keyOf(item), item.metadata.resourceVersion);
    this.#resourceVersion = list.metadata.resourceVersion;
    this.relists += 1;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      try {
        if (this.#resourceVersion === '') await this.relist();
        await this.#watchOnce();
      } catch (error) {
        this.errors.record(this.client.name, `${this.kind}-list`, error instanceof Error ? error.message : String(error));
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  #stopped(): boolean {
    return !this.#running;
  }

  async #watchOnce(): Promise<void> {
    // stop() may have come while listing.
    if (this.#stopped()) return;
    const path = `${this.collection}?watch=true&allowWatchBookmarks=true&resourceVersion=${this.#resourceVersion}&timeoutSeconds=${Math.round(this.timeoutSeconds())}`;
    const handle = this.client.watch(path, {
      onLine: (line) => {
        this.#receive(line);
      },
    });
    this.#current = handle;
    const { status, error } = await handle.ended;
    if (!this.#running) return;
    if (status !== 200 || error !== undefined) {
      this.errors.record(this.client.name, `${this.kind}-watch`, error ?? String(status));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  #receive(line: string): void {
    let event: WatchEvent;
    try {
      event = JSON.parse(line) as WatchEvent;
    } catch {
      this.errors.record(this.client.name, `${this.kind}-watch-line`, line.slice(0, 60));
      this.#current?.close();
      return;
    }
    this.#apply(event);
  }

  #apply(event: WatchEvent): void {
    const object = event.object;
    if (event.type === 'ERROR') {
      // 410 Expired: the position is gone from the server's history; relist as client-go does.
      if (object.code === 410) this.#resourceVersion = '';
      else this.errors.record(this.client.name, `${this.kind}-watch-error`, `${object.code ?? '?'} ${object.reason ?? ''}`);
      this.#current?.close();
      return;
    }
    const resourceVersion = object.metadata?.resourceVersion;
    if (resourceVersion !== undefined) this.#resourceVersion = resourceVersion;
    if (event.type === 'BOOKMARK') return;
    this.events += 1;
    const item = object as Item;
    if (event.type === 'DELETED') this.items.delete(keyOf(item));
    else this.items.set(keyOf(item), item.metadata.resourceVersion);
  }
}

function keyOf(item: Item): string {
  return `${item.metadata.namespace ?? ''}/${item.metadata.name}`;
}

/** Differences between a cache and a fresh list (key → resourceVersion): missing, extra, stale. */
export function compare(cache: ReadonlyMap<string, string>, list: ReadonlyMap<string, string>): { missing: string[]; extra: string[]; stale: string[] } {
  const missing = [...list.keys()].filter((key) => !cache.has(key));
  const extra = [...cache.keys()].filter((key) => !list.has(key));
  const stale = [...list.entries()].filter(([key, rv]) => cache.has(key) && cache.get(key) !== rv).map(([key]) => key);
  return { missing, extra, stale };
}
