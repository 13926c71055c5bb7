/**
 * Follows a WatchHub from inside the server, for a resource derived from
 * another one: an all-namespaces watcher that starts from the hub's state
 * and, whenever the hub ends it (a relist's 410 Expired), starts over with
 * the hub's new state. Each start is reported as a resync.
 */
import { SelectionPredicate } from './selection.js';
import type { ApiObject, ObjectEvent } from './types.js';
import type { WatchEventOut, WatchHub } from './watch-hub.js';

export interface HubFollowerHandlers {
  /** The hub's complete state at resourceVersion, replacing everything reported before. */
  readonly onResync: (objects: readonly ApiObject[], resourceVersion: string) => void;
  readonly onEvent: (event: ObjectEvent) => void;
}

const retryMs = 1000;

/** Starts following; returns the function that stops. */
export function followHub(hub: WatchHub, handlers: HubFollowerHandlers): () => void {
  const state = { stopped: false, timer: undefined as ReturnType<typeof setTimeout> | undefined, unsubscribe: undefined as (() => void) | undefined };
  const retryLater = (): void => {
    state.timer = setTimeout(subscribe, retryMs);
    state.timer.unref();
  };
  function subscribe(): void {
    if (state.stopped) return;
    // The hub refuses watches (429) until its first list and after stop().
    if (!hub.hasSynced()) {
      retryLater();
      return;
    }
    const resourceVersion = hub.currentResourceVersion();
    handlers.onResync(hub.list(), resourceVersion);
    try {
      state.unsubscribe = hub.watch(
        { selection: SelectionPredicate.everything(), resourceVersion, allowBookmarks: false },
        {
          send: (event) => {
            if (isObjectEvent(event)) handlers.onEvent(event);
            return true;
          },
          // Not from inside the hub's own call: start over once it has returned.
          close: () => {
            queueMicrotask(subscribe);
          },
          onDrain: () => undefined,
        },
      );
    } catch {
      retryLater();
    }
  }
  subscribe();
  return () => {
    state.stopped = true;
    clearTimeout(state.timer);
    state.unsubscribe?.();
  };
}

function isObjectEvent(event: WatchEventOut): event is ObjectEvent {
  return event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED';
}
