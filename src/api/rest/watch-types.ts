/**
 * What a WatchHub is asked and what it needs from the HTTP layer (the
 * cacher's storage.ListOptions for a watch, and the watch.Interface result
 * channel turned around into a sink).
 */
import type { GroupResource } from '../status.js';
import type { WatchScope } from './namespace-scope.js';
import type { SelectionPredicate } from './selection.js';
import type { ApiObject, WatchEventOut } from './types.js';
import type { HubStateSource } from './watch-state.js';

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
  /** Set for a watch of all namespaces narrowed to the requester's: the hub follows changes of that set. */
  readonly scope?: WatchScope;
}

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
  /** A derived resource: the state is computed by this source, the hub keeps only the history of changes. */
  readonly derivedState?: HubStateSource;
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
