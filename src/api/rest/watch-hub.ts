/**
 * The in-memory cache, event history and watch fan-out of one virtual
 * resource: the equivalent of kube-apiserver's watch cache and cacher
 * (k8s.io/apiserver pkg/storage/cacher: watch_cache.go, cacher.go,
 * cache_watcher.go), fed by the store from one backing informer.
 *
 * Feed (strictly in resourceVersion order, from a single caller):
 *  - reset(rv, objects): a (re)list. The history restarts at rv; watchers
 *    whose position is older than rv are ended with 410 Expired.
 *  - publish(event): one change; updates the state, appends to the bounded
 *    history ring and fans out to the watchers of the object's namespace
 *    plus the all-namespaces watchers.
 *  - progress(rv): the feed has seen everything up to rv (a backing bookmark).
 *
 * Watch starting points follow kube-apiserver (see `watch()`); selector
 * transitions follow cacheWatcher.convertToWatchEvent; a watcher that cannot
 * keep up is closed, as the cacher closes it, and the client re-watches from
 * the last resourceVersion it received.
 *
 * Objects are shared between the cache, the history and every watcher: they
 * must be treated as immutable by the feed and by sinks.
 */
import { invalid, invalidValue } from '../field-errors.js';
import { ApiError, type GroupResource } from '../status.js';
import type { SelectionPredicate } from './selection.js';
import { compareStorageKeys, type ApiObject, type ObjectEvent } from './types.js';

export interface WatchRequest {
  /** undefined = all namespaces. */
  readonly namespace?: string;
  /** The request's selection, applied to every initial and live event (the namespace is handled by the hub). */
  readonly selection: SelectionPredicate;
  /** As sent by the client; '' is treated as unset. */
  readonly resourceVersion?: string;
  readonly sendInitialEvents?: boolean;
  readonly allowBookmarks: boolean;
  /**
   * Required when resourceVersion is unset: a consistent snapshot the caller
   * read from kube-apiserver. The hub uses it when its own feed lags behind
   * it; when the hub has already reached its resourceVersion, the hub's own
   * (equally fresh or fresher) state is used instead. With
   * sendInitialEvents=false only its resourceVersion matters.
   */
  readonly consistentStart?: { readonly resourceVersion: string; readonly objects: readonly ApiObject[] };
  /**
   * When the HTTP layer will end the watch (ms since the epoch, Date.now()
   * clock). Like the cacher, the hub then sends one last bookmark 2 s before
   * it so the client resumes from a fresh resourceVersion.
   */
  readonly deadline?: number;
}

export type WatchEventOut =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: ApiObject }
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string; readonly initialEventsEnd: boolean }
  | { readonly type: 'ERROR'; readonly status: ApiError };

/**
 * Where one watcher's events go (the HTTP response). Calls come from
 * watch(), publish(), reset(), progress(), timers and drain callbacks; a sink
 * may receive events, and even close(), before watch() has returned. Sinks
 * must not call publish(), reset() or progress().
 */
export interface WatchSink {
  /**
   * Writes one event. It must always take the event; returning false (like
   * stream.write) asks the hub to send nothing more until the drain listener
   * runs. Meanwhile the hub queues up to `bufferSize` live events for this
   * watcher; beyond that it closes the watcher (see WatchHubOptions).
   * A send() that throws detaches the watcher (no close()).
   */
  send(event: WatchEventOut): boolean;
  /**
   * The hub is done with this watcher: after an ERROR event, a slow-consumer
   * termination or stop(). Not called after the caller's own unsubscribe.
   */
  close(): void;
  /**
   * Called once per watcher, before any event is sent, to register the
   * listener the sink must invoke whenever it can take events again after
   * send() returned false (with node:http: `res.on('drain', listener)`).
   * Invoking it at other times is harmless.
   */
  onDrain(listener: () => void): void;
}

export interface WatchHubOptions {
  /** Names the resource in error messages. */
  readonly resource: GroupResource;
  /** Events kept for resuming watches from a resourceVersion. Default 1000. */
  readonly historySize?: number;
  /** Live events queued per watcher while its sink is not draining. Default 1000. */
  readonly bufferSize?: number;
  /** Period of bookmarks to watchers that allow them. Default 60 000 (cacher's defaultBookmarkFrequency). */
  readonly bookmarkIntervalMs?: number;
  /** How long NotOlderThan waits for the feed to reach a resourceVersion. Default 3 000 (watch cache blockTimeout). */
  readonly freshnessTimeoutMs?: number;
  /** Told about a sink whose send() or close() threw; the watcher is detached. */
  readonly onSinkError?: (error: unknown) => void;
}

export interface WatchHubStats {
  /** Open watchers, including those still waiting for a resourceVersion. */
  readonly watchers: number;
  /** Watchers waiting for the feed to reach their resourceVersion. */
  readonly pendingWatchers: number;
  readonly objects: number;
  /** Events currently held in the history ring. */
  readonly historyEvents: number;
  readonly eventsPublished: number;
  /** Events handed to sinks (including bookmarks and errors). */
  readonly eventsDelivered: number;
  readonly terminations: {
    /** 410 Expired: resourceVersion older than the history, or a relist passed the watcher. */
    readonly expired: number;
    /** Closed because the sink could not keep up with live events. */
    readonly slowConsumer: number;
    /** 504: the feed did not reach the requested resourceVersion in time. */
    readonly tooLargeResourceVersion: number;
    /** A sink threw. */
    readonly sinkError: number;
  };
}

type TerminationReason = keyof WatchHubStats['terminations'];

const defaultHistorySize = 1000;
const defaultBufferSize = 1000;
const defaultBookmarkIntervalMs = 60_000;
const defaultFreshnessTimeoutMs = 3_000;
/** cache_watcher.go nextBookmarkTime: the last bookmark goes 2 s before the watch deadline. */
const preDeadlineBookmarkMs = 2_000;
/** watch_cache.go resourceVersionTooHighRetrySeconds. */
const tooLargeRetrySeconds = 1;
const maxUint64 = (1n << 64n) - 1n;

type Timer = ReturnType<typeof setTimeout>;

interface HistoryEntry {
  readonly type: ObjectEvent['type'];
  readonly rv: bigint;
  readonly object: ApiObject;
  /** The cached state before this event, if the object was known. */
  readonly prev: ApiObject | undefined;
  /** prev carrying this event's resourceVersion; built on first use (selector transitions to DELETED). */
  deletedView?: ApiObject;
}

interface Waiter {
  readonly rv: bigint;
  readonly wake: () => void;
}

type Phase = 'pending' | 'active' | 'closed';

interface ConsistentStart {
  readonly rv: bigint;
  readonly objects: readonly ApiObject[];
}

/** Where a watch starts: the caller's consistent snapshot (resourceVersion unset) or a client resourceVersion. */
type Origin =
  | { readonly kind: 'consistent'; readonly start: ConsistentStart }
  | { readonly kind: 'resourceVersion'; readonly rv: bigint };

class Watcher {
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

export class WatchHub {
  private readonly resource: GroupResource;
  private readonly historySize: number;
  private readonly bufferSize: number;
  private readonly bookmarkIntervalMs: number;
  private readonly freshnessTimeoutMs: number;
  private readonly onSinkError: ((error: unknown) => void) | undefined;

  /** namespace ('' for cluster-scoped objects) → name → object. */
  private readonly objects = new Map<string, Map<string, ApiObject>>();
  private objectCount = 0;

  private readonly history: (HistoryEntry | undefined)[];
  private historyStart = 0;
  private historyLength = 0;
  /** Events with resourceVersion > windowStart are all in the history. */
  private windowStart = 0n;

  private current = 0n;
  private synced = false;
  private stopped = false;
  private readonly createdAt = Date.now();

  private readonly open = new Set<Watcher>();
  private readonly byNamespace = new Map<string, Set<Watcher>>();
  private readonly allNamespaces = new Set<Watcher>();
  private readonly waiters = new Set<Waiter>();

  private eventsPublished = 0;
  private eventsDelivered = 0;
  private readonly terminations: Record<TerminationReason, number> = {
    expired: 0,
    slowConsumer: 0,
    tooLargeResourceVersion: 0,
    sinkError: 0,
  };

  constructor(options: WatchHubOptions) {
    this.resource = options.resource;
    this.historySize = positiveInteger('historySize', options.historySize ?? defaultHistorySize);
    this.bufferSize = positiveInteger('bufferSize', options.bufferSize ?? defaultBufferSize);
    this.bookmarkIntervalMs = positiveInteger('bookmarkIntervalMs', options.bookmarkIntervalMs ?? defaultBookmarkIntervalMs);
    this.freshnessTimeoutMs = positiveInteger('freshnessTimeoutMs', options.freshnessTimeoutMs ?? defaultFreshnessTimeoutMs);
    this.onSinkError = options.onSinkError;
    this.history = new Array<HistoryEntry | undefined>(this.historySize);
  }

  // ---- feed -------------------------------------------------------------

  /**
   * A (re)list at `resourceVersion`: replaces the state and restarts the
   * history there. Every open watcher whose position (the newest
   * resourceVersion it has been given or skipped) is older than
   * `resourceVersion` gets 410 Expired `too old resource version: P (RV)` and
   * is closed; it may have missed changes the relist folded in. Watchers
   * already at or past `resourceVersion` (waiting for a future one) keep
   * going, as do watchers still waiting to start.
   */
  reset(resourceVersion: string, objects: readonly ApiObject[]): void {
    const rv = feedRevision(resourceVersion, 'reset');
    const keyed = objects.map((object) => [keyOf(object), object] as const); // validate before replacing anything
    const previous = this.synced ? this.current : undefined;

    this.objects.clear();
    this.objectCount = 0;
    for (const [key, object] of keyed) this.store(key, object);

    this.history.fill(undefined);
    this.historyStart = 0;
    this.historyLength = 0;
    this.windowStart = rv;
    this.current = rv;
    this.synced = true;

    if (previous !== undefined) {
      for (const watcher of [...this.open]) {
        if (watcher.phase !== 'active') continue;
        const position = watcher.floor > previous ? watcher.floor : previous;
        if (position < rv) this.terminate(watcher, 'expired', tooOld(position, rv));
      }
    }
    this.wakeWaiters();
  }

  /** One change after the last reset, in resourceVersion order. */
  publish(event: ObjectEvent): void {
    if (!this.synced) throw new Error('WatchHub.publish before the first reset');
    const rv = feedRevision(event.object.metadata.resourceVersion, 'publish');
    if (rv <= this.current) {
      throw new Error(`WatchHub.publish out of order: resourceVersion ${rv} is not after ${this.current}`);
    }
    const key = keyOf(event.object);
    const prev = this.objects.get(key.namespace)?.get(key.name);
    if (event.type === 'DELETED') this.remove(key);
    else this.store(key, event.object);

    const entry: HistoryEntry = { type: event.type, rv, object: event.object, prev };
    this.append(entry);
    this.current = rv;
    this.eventsPublished++;

    this.dispatch(entry, this.byNamespace.get(key.namespace));
    this.dispatch(entry, this.allNamespaces);
    this.wakeWaiters();
  }

  /** The feed has seen everything up to `resourceVersion` (a backing bookmark). Older values are ignored. */
  progress(resourceVersion: string): void {
    const rv = feedRevision(resourceVersion, 'progress');
    if (!this.synced || rv <= this.current) return;
    this.current = rv;
    this.wakeWaiters();
  }

  // ---- reads ------------------------------------------------------------

  /** The newest resourceVersion the feed has reached; '' before the first reset. */
  currentResourceVersion(): string {
    return this.synced ? this.current.toString() : '';
  }

  hasSynced(): boolean {
    return this.synced;
  }

  get(namespace: string, name: string): ApiObject | undefined {
    return this.objects.get(namespace)?.get(name);
  }

  /** Objects of one namespace, or of all, in kube's list order (compareStorageKeys). */
  list(namespace?: string): ApiObject[] {
    return this.sortedState(namespace);
  }

  /**
   * Resolves once the feed has reached `resourceVersion` (NotOlderThan).
   * '' and '0' resolve at once. Rejects like the watch cache: 429 before the
   * first reset or after stop(), 422 for a malformed resourceVersion, 504
   * `Too large resource version` after `freshnessTimeoutMs`, and with the
   * signal's reason when it aborts.
   */
  waitForResourceVersion(resourceVersion: string, signal?: AbortSignal): Promise<void> {
    let rv: bigint;
    try {
      this.assertServing();
      rv = resourceVersion === '' ? 0n : this.requestRevision(resourceVersion);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (rv <= this.current) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(abortReason(signal));
        return;
      }
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(waiter);
      };
      const onAbort = (): void => {
        finish();
        reject(abortReason(signal));
      };
      const waiter: Waiter = {
        rv,
        wake: () => {
          finish();
          if (this.stopped) reject(stoppedError());
          else resolve();
        },
      };
      const timer = setTimeout(() => {
        finish();
        reject(tooLarge(rv, this.current));
      }, this.freshnessTimeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  stats(): WatchHubStats {
    let pending = 0;
    for (const watcher of this.open) if (watcher.phase === 'pending') pending++;
    return {
      watchers: this.open.size,
      pendingWatchers: pending,
      objects: this.objectCount,
      historyEvents: this.historyLength,
      eventsPublished: this.eventsPublished,
      eventsDelivered: this.eventsDelivered,
      terminations: { ...this.terminations },
    };
  }

  // ---- watch ------------------------------------------------------------

  /**
   * Starts a watch; returns the function that ends it (idempotent; the sink
   * is not closed by it).
   *
   * Starting points (cacher.Watch + watchCache.getAllEventsSinceLocked):
   *  - resourceVersion unset: ADDED for the consistent start (or the hub's
   *    state when it is at least as fresh), then changes after it.
   *    sendInitialEvents=false: changes only.
   *  - "0": ADDED for the hub's state, then changes after it.
   *    sendInitialEvents=false: changes after the hub's resourceVersion.
   *  - X: changes after X, from the history then live; X older than the
   *    history → ERROR 410 Expired; X in the future → changes after X as the
   *    feed reaches them.
   *  - sendInitialEvents=true: ADDED for a state at least as new as X (waiting
   *    up to freshnessTimeoutMs for the feed, else ERROR 504), then one
   *    BOOKMARK with initialEventsEnd at that state's resourceVersion, then
   *    changes after it.
   *
   * Throws (before any event) ApiError 429 before the first reset or after
   * stop(), 422 for a malformed resourceVersion, and Error when
   * consistentStart is required but missing.
   */
  watch(request: WatchRequest, sink: WatchSink): () => void {
    this.assertServing();
    const requested = request.resourceVersion ?? '';
    // Validate everything before anything is registered or sent.
    const origin: Origin =
      requested === ''
        ? { kind: 'consistent', start: this.consistentStart(request) }
        : { kind: 'resourceVersion', rv: this.requestRevision(requested) };

    const watcher = new Watcher(request, sink);
    const unsubscribe = (): void => {
      this.detach(watcher);
    };
    this.open.add(watcher);
    try {
      sink.onDrain(() => {
        this.resume(watcher);
      });
    } catch (error) {
      this.sinkFailed(watcher, error);
      return unsubscribe;
    }

    const initialEvents = request.sendInitialEvents;
    if (origin.kind === 'consistent') {
      const { start } = origin;
      if (initialEvents === false) this.startLive(watcher, maxOf(start.rv, this.current));
      else this.startFromConsistent(watcher, start, initialEvents === true);
      return unsubscribe;
    }
    const { rv } = origin;
    if (initialEvents === true) {
      if (rv > this.current) this.waitToStart(watcher, rv);
      else this.startFromState(watcher, true);
    } else if (rv === 0n) {
      if (initialEvents === false) this.startLive(watcher, this.current);
      else this.startFromState(watcher, false);
    } else {
      this.startFromHistory(watcher, rv);
    }
    return unsubscribe;
  }

  /** Closes every watcher without an error event (server shutdown); later watches get 429. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const watcher of [...this.open]) this.closeWatcher(watcher);
    for (const waiter of [...this.waiters]) waiter.wake();
  }

  // ---- starting watchers -------------------------------------------------

  private consistentStart(request: WatchRequest): ConsistentStart {
    const start = request.consistentStart;
    if (start === undefined) throw new Error('WatchHub.watch: consistentStart is required when resourceVersion is unset');
    const rv = parseUint64(start.resourceVersion);
    if (rv === undefined || rv === 0n) {
      throw new Error(`WatchHub.watch: consistentStart has an invalid resourceVersion ${JSON.stringify(start.resourceVersion)}`);
    }
    return { rv, objects: start.objects };
  }

  /** Synthetic ADDEDs for the caller's consistent snapshot, unless the hub has caught up with it. */
  private startFromConsistent(watcher: Watcher, start: ConsistentStart, endBookmark: boolean): void {
    if (this.current >= start.rv) {
      this.startFromState(watcher, endBookmark);
      return;
    }
    // The feed lags behind the snapshot: events up to start.rv that arrive
    // later are already reflected in it and must not be delivered.
    const { namespace, selection } = watcher.request;
    const initial: WatchEventOut[] = [];
    for (const object of start.objects) {
      if (inNamespace(object, namespace) && selection.matches(object)) initial.push({ type: 'ADDED', object });
    }
    if (endBookmark) initial.push(initialEventsEnd(start.rv));
    this.activate(watcher, start.rv, initial);
  }

  private startFromState(watcher: Watcher, endBookmark: boolean): void {
    const { selection } = watcher.request;
    const initial: WatchEventOut[] = [];
    for (const object of this.sortedState(watcher.namespace)) {
      if (selection.matches(object)) initial.push({ type: 'ADDED', object });
    }
    if (endBookmark) initial.push(initialEventsEnd(this.current));
    this.activate(watcher, this.current, initial);
  }

  private startLive(watcher: Watcher, floor: bigint): void {
    this.activate(watcher, floor, []);
  }

  private startFromHistory(watcher: Watcher, rv: bigint): void {
    if (rv < this.windowStart) {
      this.terminate(watcher, 'expired', tooOld(rv, this.windowStart));
      return;
    }
    const initial: WatchEventOut[] = [];
    let floor = rv;
    for (let i = this.firstAfter(rv); i < this.historyLength; i++) {
      const entry = this.entryAt(i);
      // The history holds every namespace; live events are routed by namespace, replayed ones must be filtered.
      const event = inNamespace(entry.object, watcher.namespace) ? convert(entry, watcher.request.selection) : undefined;
      if (event !== undefined) initial.push(event);
      floor = entry.rv;
    }
    this.activate(watcher, floor, initial);
  }

  /** sendInitialEvents with a resourceVersion the feed has not reached: wait like waitUntilFreshAndBlock. */
  private waitToStart(watcher: Watcher, rv: bigint): void {
    const waiter: Waiter = {
      rv,
      wake: () => {
        if (watcher.phase !== 'pending') return;
        clearTimeout(watcher.waitTimer);
        watcher.waitTimer = undefined;
        watcher.waiter = undefined;
        this.startFromState(watcher, true);
      },
    };
    watcher.waiter = waiter;
    this.waiters.add(waiter);
    watcher.waitTimer = setTimeout(() => {
      watcher.waitTimer = undefined;
      this.terminate(watcher, 'tooLargeResourceVersion', tooLarge(rv, this.current));
    }, this.freshnessTimeoutMs);
    watcher.waitTimer.unref();
  }

  private activate(watcher: Watcher, floor: bigint, initial: WatchEventOut[]): void {
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

  // ---- delivery ---------------------------------------------------------

  private dispatch(entry: HistoryEntry, watchers: Set<Watcher> | undefined): void {
    if (watchers === undefined) return;
    for (const watcher of watchers) {
      if (entry.rv <= watcher.floor) continue;
      const event = convert(entry, watcher.request.selection);
      if (event !== undefined) this.enqueue(watcher, event);
    }
  }

  private enqueue(watcher: Watcher, event: WatchEventOut): void {
    if (watcher.phase !== 'active' || watcher.draining) return;
    if (watcher.queued() >= this.bufferSize) {
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

  private resume(watcher: Watcher): void {
    if (!watcher.paused) return;
    watcher.paused = false;
    this.pump(watcher);
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
    let next = now + this.bookmarkIntervalMs;
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
    if (this.current <= watcher.floor || watcher.draining || watcher.queued() >= this.bufferSize) return;
    watcher.queue.push({ type: 'BOOKMARK', resourceVersion: this.current.toString(), initialEventsEnd: false });
    this.pump(watcher);
  }

  // ---- ending watchers --------------------------------------------------

  /** Sends `error` (if any) and closes the sink. */
  private terminate(watcher: Watcher, reason: TerminationReason, error: ApiError | undefined): void {
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
      this.onSinkError?.(thrown);
    }
  }

  private closeWatcher(watcher: Watcher): void {
    if (watcher.phase === 'closed') return;
    this.detach(watcher);
    try {
      watcher.sink.close();
    } catch (error) {
      this.onSinkError?.(error);
    }
  }

  private sinkFailed(watcher: Watcher, error: unknown): void {
    if (watcher.phase === 'closed') return;
    this.detach(watcher);
    this.terminations.sinkError++;
    this.onSinkError?.(error);
  }

  private detach(watcher: Watcher): void {
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
    if (watcher.waiter !== undefined) this.waiters.delete(watcher.waiter);
    clearTimeout(watcher.waitTimer);
    clearTimeout(watcher.bookmarkTimer);
    watcher.waiter = undefined;
    watcher.waitTimer = undefined;
    watcher.bookmarkTimer = undefined;
    watcher.initial = [];
    watcher.queue = [];
    watcher.queueHead = 0;
  }

  // ---- state and history ------------------------------------------------

  private store(key: ObjectKey, object: ApiObject): void {
    let names = this.objects.get(key.namespace);
    if (names === undefined) {
      names = new Map();
      this.objects.set(key.namespace, names);
    }
    if (!names.has(key.name)) this.objectCount++;
    names.set(key.name, object);
  }

  private remove(key: ObjectKey): void {
    const names = this.objects.get(key.namespace);
    if (names?.delete(key.name) !== true) return;
    this.objectCount--;
    if (names.size === 0) this.objects.delete(key.namespace);
  }

  private sortedState(namespace: string | undefined): ApiObject[] {
    const namespaces = namespace === undefined ? [...this.objects.values()] : [this.objects.get(namespace) ?? new Map<string, ApiObject>()];
    return namespaces.flatMap((names) => [...names.values()]).sort(compareStorageKeys);
  }

  private append(entry: HistoryEntry): void {
    if (this.historyLength === this.historySize) {
      const evicted = this.entryAt(0);
      this.history[this.historyStart] = undefined;
      this.historyStart = (this.historyStart + 1) % this.historySize;
      this.historyLength--;
      this.windowStart = evicted.rv;
    }
    this.history[(this.historyStart + this.historyLength) % this.historySize] = entry;
    this.historyLength++;
  }

  private entryAt(index: number): HistoryEntry {
    const entry = this.history[(this.historyStart + index) % this.historySize];
    if (entry === undefined) throw new Error('WatchHub history corrupted');
    return entry;
  }

  /** Index of the first history entry with resourceVersion > rv. */
  private firstAfter(rv: bigint): number {
    let low = 0;
    let high = this.historyLength;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.entryAt(mid).rv > rv) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  private wakeWaiters(): void {
    if (this.waiters.size === 0) return;
    for (const waiter of [...this.waiters]) {
      if (waiter.rv <= this.current) {
        this.waiters.delete(waiter);
        waiter.wake();
      }
    }
  }

  // ---- request checks ---------------------------------------------------

  /** cacher.Watch with ResilientWatchCacheInitialization: 429 while not ready. */
  private assertServing(): void {
    if (this.stopped) {
      throw stoppedError();
    }
    if (!this.synced) {
      const downtimeSeconds = (Date.now() - this.createdAt) / 1000;
      throw new ApiError(429, 'TooManyRequests', 'storage is (re)initializing', {
        retryAfterSeconds: retryAfterForUnreadyCache(downtimeSeconds),
      });
    }
  }

  /** A client resourceVersion, parsed like APIObjectVersioner.ParseResourceVersion ('0' → 0n). */
  private requestRevision(text: string): bigint {
    const rv = parseUint64(text);
    if (rv !== undefined) return rv;
    const problem = /^[0-9]+$/.test(text) ? 'value out of range' : 'invalid syntax';
    const detail = `strconv.ParseUint: parsing ${JSON.stringify(text)}: ${problem}`;
    throw invalid(this.resource.group, this.resource.resource, '', [invalidValue('resourceVersion', text, detail)]);
  }
}

// ---- helpers --------------------------------------------------------------

interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

function keyOf(object: ApiObject): ObjectKey {
  const name = object.metadata.name;
  if (name === undefined || name === '') throw new Error('WatchHub: object without metadata.name');
  return { namespace: object.metadata.namespace ?? '', name };
}

/** Whether a watcher of `namespace` (undefined: all namespaces) may see the object. */
function inNamespace(object: ApiObject, namespace: string | undefined): boolean {
  return namespace === undefined || (object.metadata.namespace ?? '') === namespace;
}

/**
 * The event one watcher sees for one change (cacheWatcher.convertToWatchEvent):
 * the selector is applied to the old and the new state; an object leaving
 * the selection is DELETED with its old content at the event's
 * resourceVersion, one entering it is ADDED.
 */
function convert(entry: HistoryEntry, selection: SelectionPredicate): WatchEventOut | undefined {
  const current = entry.type !== 'DELETED' && selection.matches(entry.object);
  const previous = entry.prev !== undefined && selection.matches(entry.prev);
  if (current) return { type: previous ? 'MODIFIED' : 'ADDED', object: entry.object };
  if (!previous) return undefined;
  if (entry.type === 'DELETED') return { type: 'DELETED', object: entry.object };
  entry.deletedView ??= withResourceVersion(entry.prev, entry.rv);
  return { type: 'DELETED', object: entry.deletedView };
}

function withResourceVersion(object: ApiObject | undefined, rv: bigint): ApiObject {
  if (object === undefined) throw new Error('WatchHub: no previous state');
  return { ...object, metadata: { ...object.metadata, resourceVersion: rv.toString() } };
}

function initialEventsEnd(rv: bigint): WatchEventOut {
  return { type: 'BOOKMARK', resourceVersion: rv.toString(), initialEventsEnd: true };
}

/** errors.NewResourceExpired as getAllEventsSinceLocked words it. */
function tooOld(requested: bigint, oldest: bigint): ApiError {
  return new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

/** storage.NewTooLargeResourceVersionError. */
function tooLarge(requested: bigint, current: bigint): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: tooLargeRetrySeconds,
  });
}

function stoppedError(): ApiError {
  return new ApiError(429, 'TooManyRequests', 'apiserver cacher is stopped', { retryAfterSeconds: 1 });
}

/** cacher util.go calculateRetryAfterForUnreadyCache. */
function retryAfterForUnreadyCache(downtimeSeconds: number): number {
  return Math.trunc(Math.min(30, Math.max(1, Math.exp(0.06 * downtimeSeconds))));
}

function parseUint64(text: string): bigint | undefined {
  if (!/^[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value > maxUint64 ? undefined : value;
}

function feedRevision(text: string | undefined, operation: string): bigint {
  const rv = text === undefined ? undefined : parseUint64(text);
  if (rv === undefined) throw new Error(`WatchHub.${operation}: invalid resourceVersion ${JSON.stringify(text)}`);
  return rv;
}

function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`WatchHub: ${name} must be a positive integer`);
  return value;
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}
