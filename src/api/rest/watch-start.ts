/**
 * Where a new watch starts and what it is sent first (k8s.io/apiserver
 * cacher.Watch and the watch cache's getAllEventsSinceLocked): synthetic
 * ADDEDs of a state, or the history's events after a resourceVersion.
 * Pure: the hub (watch-hub.ts) decides which applies and activates the
 * watcher with what these return.
 */
import type { ApiError } from '../status.js';
import type { ApiObject, WatchEventOut } from './types.js';
import { addedEvent, convert, initialEventsEnd, inNamespace, parseUint64, tooOld } from './watch-events.js';
import type { WatchHistory } from './watch-history.js';
import type { WatchRequest } from './watch-types.js';

/** The caller's consistent snapshot (resourceVersion unset): its revision and objects. */
export interface ConsistentStart {
  readonly rv: bigint;
  readonly objects: readonly ApiObject[];
}

/** What a watcher starts with: its position and the events before live ones. */
export interface Start {
  readonly floor: bigint;
  readonly initial: WatchEventOut[];
}

/** The request's consistent snapshot, checked; throws Error when it is missing or malformed. */
export function consistentStart(request: WatchRequest): ConsistentStart {
  const start = request.consistentStart;
  if (start === undefined) throw new Error('WatchHub.watch: consistentStart is required when resourceVersion is unset');
  const rv = parseUint64(start.resourceVersion);
  if (rv === undefined || rv === 0n) {
    throw new Error(`WatchHub.watch: consistentStart has an invalid resourceVersion ${JSON.stringify(start.resourceVersion)}`);
  }
  return { rv, objects: start.objects };
}

/**
 * ADDEDs for the objects of a state at `rv` the request selects (in
 * `namespace`, or all), then the initial-events-end bookmark if asked.
 */
export function fromState(objects: Iterable<ApiObject>, request: WatchRequest, namespace: string | undefined, rv: bigint, endBookmark: boolean): Start {
  const initial: WatchEventOut[] = [];
  for (const object of objects) {
    if (inNamespace(object, namespace) && request.selection.matches(object)) initial.push(addedEvent(object));
  }
  if (endBookmark) initial.push(initialEventsEnd(rv));
  return { floor: rv, initial };
}

/**
 * The history's events after `rv` the watcher selects, or the 410 it gets
 * when `rv` is older than the history or the changes after it include a
 * gap in its namespace.
 */
export function fromHistory(history: WatchHistory, request: WatchRequest, namespace: string | undefined, rv: bigint): Start | { readonly expired: ApiError } {
  const oldest = history.oldestResumable;
  if (rv < oldest) return { expired: tooOld(rv, oldest) };
  const initial: WatchEventOut[] = [];
  let floor = rv;
  for (let i = history.firstFrom(rv); i < history.size; i++) {
    const entry = history.at(i);
    if (entry.kind === 'gap') {
      if (namespace === undefined || entry.namespaces === undefined || entry.namespaces.has(namespace)) return { expired: tooOld(rv, entry.rv + 1n) };
    } else if (inNamespace(entry.object, namespace)) {
      // The history holds every namespace; live events are routed by namespace, replayed ones must be filtered.
      const event = convert(entry, request.selection);
      if (event !== undefined) initial.push(event);
    }
    floor = entry.rv;
  }
  return { floor, initial };
}
