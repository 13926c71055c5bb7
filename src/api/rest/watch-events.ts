/**
 * The events a WatchHub hands to watchers, and the errors it ends watches
 * with, worded as k8s.io/apiserver's cacher words them (cacher.go,
 * cache_watcher.go convertToWatchEvent, watch_cache.go, util.go).
 */
import { invalid, invalidValue } from '../field-errors.js';
import { ApiError, type GroupResource } from '../status.js';
import type { SelectionPredicate } from './selection.js';
import type { ApiObject, WatchEventOut } from './types.js';
import type { HistoryEvent } from './watch-history.js';

const maxUint64 = (1n << 64n) - 1n;
/** watch_cache.go resourceVersionTooHighRetrySeconds. */
const tooLargeRetrySeconds = 1;

/**
 * The event one watcher sees for one change (cacheWatcher.convertToWatchEvent):
 * the selector is applied to the old and the new state; an object leaving
 * the selection is DELETED with its old content at the change's
 * resourceVersion, one entering it is ADDED. The result is built once per
 * change and kind, and shared.
 */
export function convert(entry: HistoryEvent, selection: SelectionPredicate): WatchEventOut | undefined {
  const current = entry.type !== 'DELETED' && selection.matches(entry.object);
  const previous = entry.prev !== undefined && selection.matches(entry.prev);
  const shared = (entry.shared ??= {});
  if (current) {
    if (previous) return (shared.modified ??= { type: 'MODIFIED', object: entry.object });
    return (shared.added ??= { type: 'ADDED', object: entry.object });
  }
  if (!previous) return undefined;
  if (entry.type === 'DELETED') return (shared.deleted ??= { type: 'DELETED', object: entry.object });
  return (shared.deletedPrev ??= { type: 'DELETED', object: withResourceVersion(entry.prev, entry.rv) });
}

function withResourceVersion(object: ApiObject | undefined, rv: bigint): ApiObject {
  if (object === undefined) throw new Error('WatchHub: no previous state');
  return { ...object, metadata: { ...object.metadata, resourceVersion: rv.toString() } };
}

/** ADDED events of initial states, one per object, shared by every watcher starting from that object. */
const addedEvents = new WeakMap<ApiObject, WatchEventOut>();

export function addedEvent(object: ApiObject): WatchEventOut {
  let event = addedEvents.get(object);
  if (event === undefined) {
    event = { type: 'ADDED', object };
    addedEvents.set(object, event);
  }
  return event;
}

export function initialEventsEnd(rv: bigint): WatchEventOut {
  return { type: 'BOOKMARK', resourceVersion: rv.toString(), initialEventsEnd: true };
}

/** Whether a watcher of `namespace` (undefined: all namespaces) may see the object. */
export function inNamespace(object: ApiObject, namespace: string | undefined): boolean {
  return namespace === undefined || (object.metadata.namespace ?? '') === namespace;
}

/** errors.NewResourceExpired as getAllEventsSinceLocked words it. */
export function tooOld(requested: bigint, oldest: bigint): ApiError {
  return new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

/** storage.NewTooLargeResourceVersionError. */
export function tooLarge(requested: bigint, current: bigint): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: tooLargeRetrySeconds,
  });
}

export function stoppedError(): ApiError {
  return new ApiError(429, 'TooManyRequests', 'apiserver cacher is stopped', { retryAfterSeconds: 1 });
}

/** cacher.Watch with ResilientWatchCacheInitialization: 429 while not ready (util.go calculateRetryAfterForUnreadyCache). */
export function notReadyError(downtimeSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', 'storage is (re)initializing', {
    retryAfterSeconds: Math.trunc(Math.min(30, Math.max(1, Math.exp(0.06 * downtimeSeconds)))),
  });
}

export function parseUint64(text: string): bigint | undefined {
  if (!/^[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value > maxUint64 ? undefined : value;
}

/** A client resourceVersion, parsed like APIObjectVersioner.ParseResourceVersion ('0' → 0n); 422 otherwise. */
export function requestRevision(resource: GroupResource, text: string): bigint {
  const rv = parseUint64(text);
  if (rv !== undefined) return rv;
  const problem = /^[0-9]+$/.test(text) ? 'value out of range' : 'invalid syntax';
  const detail = `strconv.ParseUint: parsing ${JSON.stringify(text)}: ${problem}`;
  throw invalid(resource.group, resource.resource, '', [invalidValue('resourceVersion', text, detail)]);
}

/** A resourceVersion from the feed; a malformed one is a programming error. */
export function feedRevision(text: string | undefined, operation: string): bigint {
  const rv = text === undefined ? undefined : parseUint64(text);
  if (rv === undefined) throw new Error(`WatchHub.${operation}: invalid resourceVersion ${JSON.stringify(text)}`);
  return rv;
}
