/**
 * The watchers of a WatchHub and the delivery of events to them: the
 * cacher's watcher index by namespace (cacher.go `watchers`, dispatchEvent)
 * and cacheWatcher's per-watcher buffer, back-pressure, bookmarks and
 * termination (cache_watcher.go).
 *
 * A watcher costs a few hundred bytes here: its request, a small queue of
 * references to events shared with every other watcher (the history entry's
 * events, see convert()), two timers. Events are never copied per watcher.
 */
import type { ApiError } from '../status.js';
import type { WatchEventOut } from './types.js';
import { convert } from './watch-events.js';
import type { Waiter } from './watch-freshness.js';
import type { HistoryEvent } from './watch-history.js';
import type { WatchRequest, WatchSink } from './watch-types.js';

/** cache_watcher.go nextBookmarkTime: the last bookmark goes 2 s before the watch deadline. */
const preDeadlineBookmarkMs = 2_000;

type Timer = ReturnType<typeof setTimeout>;

export type TerminationReason = 'expired' | 'slowConsumer' | 'tooLargeResourceVersion' | 'sinkError';

type Phase = 'pending' | 'active' | 'closed';

export class Watcher {
  phase: Phase = 'pending';
  /** Live events and bookmarks are delivered only above this resourceVersion. */
  floor = 0n;
  /** Initial events (synthetic ADDEDs or replayed history), sent before anything queued. */
  initial: WatchEventOut[] = [];
  initialIndex = 0;
  initialDone = false;
  queue: WatchEventOut[] = [];
  queueHead = 0;
  paused = false;
  pumping = false;
  /** Overflowed during a watch-list: finish the initial events and end bookmark, then close. */
  draining = false;
  bookmarkTimer: Timer | undefined;
  waitTimer: Timer | undefined;
  waiter: Waiter | undefined;

  constructor(
    readonly request: WatchRequest,
    readonly sink: WatchSink,
  ) {}

  get namespace(): string | undefined {
    return this.request.namespace;
  }

  queued(): number {
    return this.queue.length - this.queueHead;
  }

  dequeue(): WatchEventOut | undefined {
    if (this.queueHead >= this.queue.length) return undefined;
    const event = this.queue[this.queueHead];
    this.queueHead++;
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    } else if (this.queueHead >= 1024 && this.queueHead * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
    return event;
  }
}

export interface DispatchOptions {
  readonly bufferSize: number;
  readonly bookmarkIntervalMs: number;
  /** The hub's current resourceVersion (for bookmarks). */
  readonly current: () => bigint;
  /** Called after a watcher is detached (to drop its freshness waiter). */
  readonly onDetach: (watcher: Watcher) => void;
  readonly onSinkError: ((error: unknown) => void) | undefined;
}

export class Watchers {
  private readonly open = new Set<Watcher>();
  private readonly byNamespace = new Map<string, Set<Watcher>>();
  private readonly allNamespaces = new Set<Watcher>();
  eventsDelivered = 0;
  readonly terminations: Record<TerminationReason, number> = { expired: 0, slowConsumer: 0, tooLargeResourceVersion: 0, sinkError: 0 };

  constructor(private readonly options: DispatchOptions) {}

  add(watcher: Watcher): void {
    this.open.add(watcher);
  }

  all(): Watcher[] {
    return [...this.open];
  }

  get size(): number {
    return this.open.size;
  }

  /** Whether any watcher (all-namespaces ones included) would receive an event of the namespace. */
  watched(namespace: string): boolean {
    return this.allNamespaces.size > 0 || this.byNamespace.has(namespace);
  }

  /** Fans one change out to the watchers of its namespace and of all namespaces. */
  dispatch(entry: HistoryEvent, namespace: string): void {
    this.dispatchTo(entry, this.byNamespace.get(namespace));
    this.dispatchTo(entry, this.allNamespaces);
  }

  /** Queues events that come from outside the feed (a change of the watcher's scope) behind what is queued. */
  inject(watcher: Watcher, events: readonly WatchEventOut[]): void {
    for (const event of events) this.enqueue(watcher, event);
  }

  activate(watcher: Watcher, floor: bigint, initial: WatchEventOut[]): void {
    if (watcher.phase !== 'pending') return;
    watcher.phase = 'active';
    watcher.floor = floor;
    watcher.initial = initial;
    watcher.initialIndex = 0;
    const namespace = watcher.namespace;
    if (namespace === undefined) {
      this.allNamespaces.add(watcher);
    } else {
      let set = this.byNamespace.get(namespace);
      if (set === undefined) {
        set = new Set();
        this.byNamespace.set(namespace, set);
      }
      set.add(watcher);
    }
    this.pump(watcher);
  }

  resume(watcher: Watcher): void {
    if (!watcher.paused) return;
    watcher.paused = false;
    this.pump(watcher);
  }

  /** Sends `error` (if any) and closes the sink. */
  terminate(watcher: Watcher, reason: TerminationReason, error: ApiError | undefined): void {
    if (watcher.phase === 'closed') return;
    this.detach(watcher);
    this.terminations[reason]++;
    try {
      if (error !== undefined) {
        watcher.sink.send({ type: 'ERROR', status: error });
        this.eventsDelivered++;
      }
      watcher.sink.close();
    } catch (thrown) {
      this.options.onSinkError?.(thrown);
    }
  }

  /** Closes without an error event (server shutdown). */
  close(watcher: Watcher): void {
    if (watcher.phase === 'closed') return;
    this.detach(watcher);
    try {
      watcher.sink.close();
    } catch (error) {
      this.options.onSinkError?.(error);
    }
  }

  sinkFailed(watcher: Watcher, error: unknown): void {
    if (watcher.phase === 'closed') return;
    this.detach(watcher);
    this.terminations.sinkError++;
    this.options.onSinkError?.(error);
  }

  detach(watcher: Watcher): void {
    if (watcher.phase === 'closed') return;
    watcher.phase = 'closed';
    this.open.delete(watcher);
    const namespace = watcher.namespace;
    if (namespace === undefined) {
      this.allNamespaces.delete(watcher);
    } else {
      const set = this.byNamespace.get(namespace);
      if (set !== undefined) {
        set.delete(watcher);
        if (set.size === 0) this.byNamespace.delete(namespace);
      }
    }
    this.options.onDetach(watcher);
    clearTimeout(watcher.waitTimer);
    clearTimeout(watcher.bookmarkTimer);
    watcher.waiter = undefined;
    watcher.waitTimer = undefined;
    watcher.bookmarkTimer = undefined;
    watcher.initial = [];
    watcher.queue = [];
    watcher.queueHead = 0;
  }

  // ---- delivery ---------------------------------------------------------

  private dispatchTo(entry: HistoryEvent, watchers: Set<Watcher> | undefined): void {
    if (watchers === undefined) return;
    for (const watcher of watchers) {
      if (entry.rv <= watcher.floor) continue;
      const event = convert(entry, watcher.request.selection);
      if (event !== undefined) this.enqueue(watcher, event);
    }
  }

  private enqueue(watcher: Watcher, event: WatchEventOut): void {
    if (watcher.phase !== 'active' || watcher.draining) return;
    if (watcher.queued() >= this.options.bufferSize) {
      this.overflow(watcher);
      return;
    }
    watcher.queue.push(event);
    this.pump(watcher);
  }

  /** Sends initial events, then queued ones, until the sink pushes back. */
  private pump(watcher: Watcher): void {
    if (watcher.pumping) return;
    watcher.pumping = true;
    try {
      while (watcher.phase === 'active' && !watcher.paused) {
        let event: WatchEventOut | undefined;
        if (!watcher.initialDone) {
          event = watcher.initial[watcher.initialIndex];
          if (event === undefined) {
            this.finishInitial(watcher);
            continue;
          }
          watcher.initialIndex++;
        } else {
          event = watcher.dequeue();
          if (event === undefined) break;
        }
        this.deliver(watcher, event);
      }
    } finally {
      watcher.pumping = false;
    }
  }

  private finishInitial(watcher: Watcher): void {
    watcher.initialDone = true;
    watcher.initial = [];
    watcher.initialIndex = 0;
    if (watcher.draining) {
      this.terminate(watcher, 'slowConsumer', undefined);
      return;
    }
    if (watcher.request.allowBookmarks) this.scheduleBookmark(watcher);
  }

  private deliver(watcher: Watcher, event: WatchEventOut): void {
    let accepted: boolean;
    try {
      accepted = watcher.sink.send(event);
    } catch (error) {
      this.sinkFailed(watcher, error);
      return;
    }
    this.eventsDelivered++;
    if (!accepted) watcher.paused = true;
  }

  /**
   * The sink fell `bufferSize` events behind. Like the cacher, close it
   * without an error so the client re-watches from its last resourceVersion
   * (client-go relists on an in-stream 500). During a watch-list whose end
   * bookmark is still to come, first finish the initial events (the
   * cacher's "graceful" close) so the client can resume from the bookmark.
   */
  private overflow(watcher: Watcher): void {
    watcher.queue = [];
    watcher.queueHead = 0;
    const pendingEndBookmark = !watcher.initialDone && watcher.initial.at(-1)?.type === 'BOOKMARK';
    if (pendingEndBookmark) watcher.draining = true;
    else this.terminate(watcher, 'slowConsumer', undefined);
  }

  private scheduleBookmark(watcher: Watcher): void {
    const now = Date.now();
    let next = now + this.options.bookmarkIntervalMs;
    const deadline = watcher.request.deadline;
    if (deadline !== undefined) next = Math.min(next, deadline - preDeadlineBookmarkMs);
    if (next <= now) return;
    watcher.bookmarkTimer = setTimeout(() => {
      watcher.bookmarkTimer = undefined;
      if (watcher.phase !== 'active') return;
      this.bookmark(watcher);
      this.scheduleBookmark(watcher);
    }, next - now);
    watcher.bookmarkTimer.unref();
  }

  /** A periodic bookmark at the hub's resourceVersion, dropped when nothing is new or the queue is full (nonblockingAdd). */
  private bookmark(watcher: Watcher): void {
    const current = this.options.current();
    if (current <= watcher.floor || watcher.draining || watcher.queued() >= this.options.bufferSize) return;
    watcher.queue.push({ type: 'BOOKMARK', resourceVersion: current.toString(), initialEventsEnd: false });
    this.pump(watcher);
  }
}
