/**
 * The in-memory cache, event history and watch fan-out of one virtual
 * resource: the equivalent of kube-apiserver's watch cache and cacher
 * (k8s.io/apiserver pkg/storage/cacher: watch_cache.go, cacher.go,
 * cache_watcher.go), fed by the store from one backing informer.
 *
 * Two kinds of state (watch-state.ts): a hub that stores the objects it is
 * fed (HostClaims), or a derived hub whose objects a HubStateSource computes
 * on demand (HardwareData); a derived hub keeps only the history of changes,
 * and several changes may share a resourceVersion (they come from one input
 * change), so a resume from X replays the changes at X too.
 *
 * Feed (in resourceVersion order, from a single caller):
 *  - reset(rv, objects) (stored) / restart(rv) (derived): a (re)list. The
 *    history restarts at rv; watchers whose position is older than rv are
 *    ended with 410 Expired.
 *  - publish(event[, derived]): one change; updates the stored state,
 *    appends to the bounded history ring (watch-history.ts) and fans out to
 *    the watchers of the object's namespace plus the all-namespaces watchers
 *    (watch-dispatch.ts).
 *  - gap(rv, namespaces) (derived): changes at rv in those namespaces were
 *    not generated; resuming across them is 410 Expired.
 *  - progress(rv): the feed has seen everything up to rv (a backing bookmark).
 *
 * Watch starting points follow kube-apiserver (see `watch()`; their
 * initial events come from watch-start.ts); selector transitions follow
 * cacheWatcher.convertToWatchEvent; a watcher that cannot
 * keep up is closed, as the cacher closes it, and the client re-watches from
 * the last resourceVersion it received.
 *
 * Objects and events are shared between the cache, the history and every
 * watcher: they must be treated as immutable by the feed and by sinks (which
 * may therefore serialize each event once for all watchers).
 */
import type { ApiError, GroupResource } from '../status.js';
import type { ApiObject, ObjectEvent } from './types.js';
import { Watcher, Watchers, type TerminationReason } from './watch-dispatch.js';
import { FreshnessWaiters, type Waiter } from './watch-freshness.js';
import { feedRevision, notReadyError, requestRevision, stoppedError, tooLarge, tooOld } from './watch-events.js';
import { WatchHistory, type HistoryEvent } from './watch-history.js';
import { scopeChangeEvents, type ScopeChange } from './namespace-scope.js';
import { StoredState, keyOf, type HubStateSource } from './watch-state.js';
import { consistentStart, fromHistory, fromState, type ConsistentStart, type Start } from './watch-start.js';

import type { WatchHubOptions, WatchHubStats, WatchRequest, WatchSink } from './watch-types.js';

export type { WatchEventOut } from './types.js';
export type { HubStateSource } from './watch-state.js';
export type { WatchHubOptions, WatchHubStats, WatchRequest, WatchSink } from './watch-types.js';


const defaultHistorySize = 1000;
const defaultBufferSize = 1000;
const defaultBookmarkIntervalMs = 60_000;
const defaultFreshnessTimeoutMs = 3_000;

/** Where a watch starts: the caller's consistent snapshot (resourceVersion unset) or a client resourceVersion. */
type Origin = { readonly kind: 'consistent'; readonly start: ConsistentStart } | { readonly kind: 'resourceVersion'; readonly rv: bigint };

/** What a derived feed says about one change besides the event: its position in history and the state before it. */
export interface DerivedChange {
  /** The history position: the revision of the input change that caused it (≥ the object's own resourceVersion). */
  readonly resourceVersion: string;
  readonly prev: ApiObject | undefined;
}

export class WatchHub {
  private readonly resource: GroupResource;
  private readonly bufferSize: number;
  private readonly freshnessTimeoutMs: number;
  private readonly stored: StoredState | undefined;
  private readonly state: HubStateSource;
  private readonly history: WatchHistory;
  private readonly watchers: Watchers;

  private current = 0n;
  private synced = false;
  private stopped = false;
  private readonly createdAt = Date.now();
  private readonly waiters: FreshnessWaiters;
  private eventsPublished = 0;

  constructor(options: WatchHubOptions) {
    this.resource = options.resource;
    this.bufferSize = positiveInteger('bufferSize', options.bufferSize ?? defaultBufferSize);
    this.freshnessTimeoutMs = positiveInteger('freshnessTimeoutMs', options.freshnessTimeoutMs ?? defaultFreshnessTimeoutMs);
    const historySize = positiveInteger('historySize', options.historySize ?? defaultHistorySize);
    this.stored = options.derivedState === undefined ? new StoredState() : undefined;
    this.state = options.derivedState ?? (this.stored as StoredState);
    this.history = new WatchHistory(historySize, options.derivedState !== undefined);
    this.waiters = new FreshnessWaiters(
      this.freshnessTimeoutMs,
      () => this.current,
      () => this.stopped,
    );
    this.watchers = new Watchers({
      bufferSize: this.bufferSize,
      bookmarkIntervalMs: positiveInteger('bookmarkIntervalMs', options.bookmarkIntervalMs ?? defaultBookmarkIntervalMs),
      current: () => this.current,
      onDetach: (watcher) => {
        if (watcher.waiter !== undefined) this.waiters.delete(watcher.waiter);
      },
      onSinkError: options.onSinkError,
    });
  }

  // ---- feed -------------------------------------------------------------

  /**
   * A (re)list at `resourceVersion` (stored hubs): replaces the state and
   * restarts the history there. Every open watcher whose position (the
   * newest resourceVersion it has been given or skipped) is older than
   * `resourceVersion` gets 410 Expired `too old resource version: P (RV)` and
   * is closed; it may have missed changes the relist folded in. Watchers
   * already at or past `resourceVersion` (waiting for a future one) keep
   * going, as do watchers still waiting to start.
   */
  reset(resourceVersion: string, objects: readonly ApiObject[]): void {
    if (this.stored === undefined) throw new Error('WatchHub.reset on a derived hub: use restart()');
    const rv = feedRevision(resourceVersion, 'reset');
    this.stored.replace(objects);
    this.restartAt(rv);
  }

  /** A (re)list of a derived hub's inputs: its source already answers with the new state; as reset(). */
  restart(resourceVersion: string): void {
    if (this.stored !== undefined) throw new Error('WatchHub.restart on a stored hub: use reset()');
    this.restartAt(feedRevision(resourceVersion, 'restart'));
  }

  /**
   * One change after the last reset, in resourceVersion order. A derived
   * hub's feed gives the change's history position and previous state
   * (its source already answers with the new state); changes of a derived
   * hub may share a position.
   */
  publish(event: ObjectEvent, derived?: DerivedChange): void {
    if (!this.synced) throw new Error('WatchHub.publish before the first reset');
    if ((derived === undefined) !== (this.stored !== undefined)) throw new Error('WatchHub.publish: a derived hub needs the change, a stored one must not get it');
    const rv = feedRevision(derived?.resourceVersion ?? event.object.metadata.resourceVersion, 'publish');
    if (derived === undefined ? rv <= this.current : rv < this.current) {
      throw new Error(`WatchHub.publish out of order: resourceVersion ${rv} is not after ${this.current}`);
    }
    const namespace = keyOf(event.object).namespace;
    const prev = this.stored?.apply(event.type, event.object) ?? derived?.prev;
    const entry: HistoryEvent = { kind: 'event', type: event.type, rv, object: event.object, prev };
    this.history.append(entry);
    this.current = rv;
    this.eventsPublished++;
    this.watchers.dispatch(entry, namespace);
    this.wakeWaiters();
  }

  /**
   * Derived hubs: changes at `resourceVersion` in `namespaces` (undefined:
   * all) that were not generated because no watcher would receive them now
   * and there were too many for the history anyway. A watch resuming across
   * the gap in one of those namespaces is 410 Expired and relists.
   */
  gap(resourceVersion: string, namespaces: ReadonlySet<string> | undefined): void {
    if (this.stored !== undefined) throw new Error('WatchHub.gap on a stored hub');
    const rv = feedRevision(resourceVersion, 'gap');
    if (rv < this.current) throw new Error(`WatchHub.gap out of order: resourceVersion ${rv} is before ${this.current}`);
    this.history.append({ kind: 'gap', rv, namespaces });
    this.current = rv;
    this.wakeWaiters();
  }

  /** The feed has seen everything up to `resourceVersion` (a backing bookmark). Older values are ignored. */
  progress(resourceVersion: string): void {
    const rv = feedRevision(resourceVersion, 'progress');
    if (!this.synced || rv <= this.current) return;
    this.current = rv;
    this.wakeWaiters();
  }

  /** Whether a change in the namespace would reach a watcher now (derived feeds skip generating the others when they are many). */
  watched(namespace: string): boolean {
    return this.watchers.watched(namespace);
  }

  /** How many changes the history keeps. */
  historyCapacity(): number {
    return this.history.capacity;
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
    return this.state.get(namespace, name);
  }

  /** Objects of one namespace, or of all, in kube's list order (compareStorageKeys). */
  list(namespace?: string): ApiObject[] {
    return this.state.list(namespace);
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
      rv = resourceVersion === '' ? 0n : requestRevision(this.resource, resourceVersion);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return this.waiters.wait(rv, signal);
  }

  stats(): WatchHubStats {
    const open = this.watchers.all();
    return {
      watchers: open.length,
      pendingWatchers: open.filter((w) => w.phase === 'pending').length,
      objects: this.state.count(),
      historyEvents: this.history.size,
      eventsPublished: this.eventsPublished,
      eventsDelivered: this.watchers.eventsDelivered,
      terminations: { ...this.watchers.terminations },
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
   *  - X: changes after X (a derived hub: from X, see the module comment),
   *    from the history then live; X older than the history, or a gap of
   *    the watcher's namespace → ERROR 410 Expired; X in the future →
   *    changes after X as the feed reaches them.
   *  - sendInitialEvents=true: ADDED for a state at least as new as X (waiting
   *    up to freshnessTimeoutMs for the feed, else ERROR 504), then, if the
   *    client allows bookmarks, one BOOKMARK with initialEventsEnd at that
   *    state's resourceVersion, then changes after it.
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
      requested === '' ? { kind: 'consistent', start: consistentStart(request) } : { kind: 'resourceVersion', rv: requestRevision(this.resource, requested) };

    const watcher = new Watcher(request, sink);
    const stopScope = request.scope?.onChange((change) => {
      this.rescope(watcher, change);
    });
    const unsubscribe = (): void => {
      stopScope?.();
      this.watchers.detach(watcher);
    };
    this.watchers.add(watcher);
    try {
      sink.onDrain(() => {
        this.watchers.resume(watcher);
      });
    } catch (error) {
      this.watchers.sinkFailed(watcher, error);
      return unsubscribe;
    }

    const initialEvents = request.sendInitialEvents;
    // setInitialEventsEndBookmarkIfRequested: the end of the initial events is marked only for a client that takes bookmarks.
    const endBookmark = initialEvents === true && request.allowBookmarks;
    if (origin.kind === 'consistent') {
      const { start } = origin;
      if (initialEvents === false) this.watchers.activate(watcher, maxOf(start.rv, this.current), []);
      else this.startFromConsistent(watcher, start, endBookmark);
      return unsubscribe;
    }
    const { rv } = origin;
    if (initialEvents === true) {
      if (rv > this.current) this.waitToStart(watcher, rv, endBookmark);
      else this.startFromState(watcher, endBookmark);
    } else if (rv === 0n) {
      if (initialEvents === false) this.watchers.activate(watcher, this.current, []);
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
    for (const watcher of this.watchers.all()) this.watchers.close(watcher);
    this.waiters.wakeAll();
  }

  /**
   * The watcher's readable namespaces changed (its selection already
   * follows): ADDED/DELETED for the objects that appeared or disappeared,
   * then a bookmark so the client's resourceVersion is current again. A
   * watcher not yet started computes its initial events with the new scope.
   */
  private rescope(watcher: Watcher, change: ScopeChange): void {
    const scope = watcher.request.scope;
    if (watcher.phase !== 'active' || scope === undefined) return;
    const events = scopeChangeEvents(change, scope, (namespace) => this.state.list(namespace));
    if (events.length === 0) return;
    if (watcher.request.allowBookmarks) events.push({ type: 'BOOKMARK', resourceVersion: maxOf(this.current, watcher.floor).toString(), initialEventsEnd: false });
    this.watchers.inject(watcher, events);
  }

  // ---- starting watchers -------------------------------------------------

  /** Synthetic ADDEDs for the caller's consistent snapshot, unless the hub has caught up with it. */
  private startFromConsistent(watcher: Watcher, start: ConsistentStart, endBookmark: boolean): void {
    if (this.current >= start.rv) {
      this.startFromState(watcher, endBookmark);
      return;
    }
    // The feed lags behind the snapshot: events up to start.rv that arrive
    // later are already reflected in it and must not be delivered.
    this.activate(watcher, fromState(start.objects, watcher.request, watcher.request.namespace, start.rv, endBookmark));
  }

  private startFromState(watcher: Watcher, endBookmark: boolean): void {
    this.activate(watcher, fromState(this.state.list(watcher.namespace), watcher.request, undefined, this.current, endBookmark));
  }

  private startFromHistory(watcher: Watcher, rv: bigint): void {
    const start = fromHistory(this.history, watcher.request, watcher.namespace, rv);
    if ('expired' in start) this.watchers.terminate(watcher, 'expired', start.expired);
    else this.activate(watcher, start);
  }

  private activate(watcher: Watcher, start: Start): void {
    this.watchers.activate(watcher, start.floor, start.initial);
  }

  /** sendInitialEvents with a resourceVersion the feed has not reached: wait like waitUntilFreshAndBlock. */
  private waitToStart(watcher: Watcher, rv: bigint, endBookmark: boolean): void {
    const waiter: Waiter = {
      rv,
      wake: () => {
        if (watcher.phase !== 'pending') return;
        clearTimeout(watcher.waitTimer);
        watcher.waitTimer = undefined;
        watcher.waiter = undefined;
        this.startFromState(watcher, endBookmark);
      },
    };
    watcher.waiter = waiter;
    this.waiters.add(waiter);
    watcher.waitTimer = setTimeout(() => {
      watcher.waitTimer = undefined;
      this.watchers.terminate(watcher, 'tooLargeResourceVersion', tooLarge(rv, this.current));
    }, this.freshnessTimeoutMs);
    watcher.waitTimer.unref();
  }

  // ---- feed internals ---------------------------------------------------

  private restartAt(rv: bigint): void {
    const previous = this.synced ? this.current : undefined;
    this.history.restart(rv);
    this.current = rv;
    this.synced = true;
    if (previous !== undefined) {
      for (const watcher of this.watchers.all()) {
        if (watcher.phase !== 'active') continue;
        const position = maxOf(watcher.floor, previous);
        if (position < rv) this.terminate(watcher, 'expired', tooOld(position, rv));
      }
    }
    this.wakeWaiters();
  }

  private terminate(watcher: Watcher, reason: TerminationReason, error: ApiError | undefined): void {
    this.watchers.terminate(watcher, reason, error);
  }

  private wakeWaiters(): void {
    this.waiters.wakeReached();
  }

  /** cacher.Watch with ResilientWatchCacheInitialization: 429 while not ready. */
  private assertServing(): void {
    if (this.stopped) throw stoppedError();
    if (!this.synced) throw notReadyError((Date.now() - this.createdAt) / 1000);
  }
}

function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`WatchHub: ${name} must be a positive integer`);
  return value;
}
