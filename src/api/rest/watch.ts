/**
 * Watch over HTTP: a chunked stream of JSON events, one line each, flushed
 * per event, in the negotiated representation. Every watch is a
 * subscription to the resource's shared in-memory fan-out (never its own
 * backing watch); with resourceVersion unset, the starting state is read
 * consistently from kube-apiserver first. The request's SelectionPredicate
 * goes to the hub, which applies it to the initial state and every event
 * (cacheWatcher's filter), whatever the starting point.
 *
 * The hub shares each change's event among all its watchers, so a JSON or
 * PartialObjectMetadata line is serialized once per (event, representation)
 * and the same string written to every watcher (kube's cachingObject); a
 * Table line depends on the watcher (headers once, ages) and is encoded per
 * watcher. What each watcher sees goes through its RequesterProjection
 * (projection.ts, watch-projection.ts): lines are shared per projection
 * class (tenant, infrastructure admin), never serialized per watcher.
 */
import type { Request, Response } from 'express';
import { requestContext, requestUser } from '../request-context.js';
import type { RestResource } from './contracts.js';
import { negotiateOutput, type OutputFormat } from './output-format.js';
import { parseIncludeObject } from './table.js';
import { encodeWatchEventObject, newWatchOutputState } from './watch-output.js';
import type { WatchScope } from './namespace-scope.js';
import { RequesterProjection, type ProjectionClass } from './projection.js';
import type { ListParameters, ListScope } from './query.js';
import type { ApiObject } from './types.js';
import type { WatchEventOut } from './watch-hub.js';
import { ProjectingSink } from './watch-projection.js';

const minRequestTimeoutSeconds = 1800;

export async function serveWatch(
  req: Request,
  res: Response,
  resource: RestResource,
  apiVersion: string,
  scope: ListScope,
  params: ListParameters,
  /** A watch of all namespaces narrowed to the requester's (namespace-scope.ts). */
  narrowed?: WatchScope,
): Promise<void> {
  const format = negotiateOutput(req.headers.accept, 'watch');
  const { url } = requestContext(req);
  const state = newWatchOutputState({
    columns: resource.strategy.columns,
    ...(format.kind === 'table' ? { includeObject: parseIncludeObject(url.searchParams) } : {}),
  });
  const store = resource.store;
  const consistentStart =
    params.resourceVersion === undefined
      ? await consistentSnapshot(resource, scope, params)
      : undefined;
  // kube: timeoutSeconds, else a random duration in [minRequestTimeout, 2×minRequestTimeout).
  const timeoutMs = 1000 * (params.timeoutSeconds ?? minRequestTimeoutSeconds * (1 + Math.random()));
  const deadline = Date.now() + timeoutMs;
  const kind = resource.strategy.descriptor.kind;
  const projection = new RequesterProjection(resource.strategy.projection, requestUser(req));

  res.writeHead(200, { 'Content-Type': contentType(format), 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();

  // Events, and even close(), may arrive before watch() returns.
  const stream = { finished: false, unsubscribe: undefined as (() => void) | undefined };
  const finish = (): void => {
    if (stream.finished) return;
    stream.finished = true;
    clearTimeout(timer);
    stream.unsubscribe?.();
    res.end();
  };
  const timer = setTimeout(finish, timeoutMs);
  res.on('close', finish);
  const unsubscribe = store.hub.watch(
    {
      namespace: scope.namespace,
      selection: params.selection,
      resourceVersion: params.resourceVersion,
      sendInitialEvents: params.sendInitialEvents,
      allowBookmarks: params.allowWatchBookmarks,
      ...(consistentStart === undefined ? {} : { consistentStart }),
      deadline,
      ...(narrowed === undefined ? {} : { scope: narrowed }),
    },
    // Held events may be released after the stream ended (client gone, timeout): they are dropped with it.
    new ProjectingSink(projection, (event, projectionClass) => !stream.finished && res.write(eventLine(event, format, state, kind, apiVersion, projection, projectionClass)), {
      close: finish,
      onDrain: (listener) => res.on('drain', listener),
    }),
  );
  if (stream.finished) unsubscribe();
  else stream.unsubscribe = unsubscribe;
}

/** A consistent read with the request's selection pushed down; the hub applies the selection to it. */
async function consistentSnapshot(resource: RestResource, scope: ListScope, params: ListParameters) {
  const list = await resource.store.list(scope.namespace, { selection: params.selection });
  return { resourceVersion: list.metadata.resourceVersion ?? '', objects: list.items };
}

/** Serialized lines of shared events, by projection class and representation; dropped with the event once no history or watcher holds it. */
const serialized = new WeakMap<WatchEventOut, Map<string, string>>();

function eventLine(
  shared: WatchEventOut,
  format: OutputFormat,
  state: ReturnType<typeof newWatchOutputState>,
  kind: string,
  apiVersion: string,
  projection: RequesterProjection,
  projectionClass: ProjectionClass,
): string {
  const encode = (): string => `${JSON.stringify(encodeEvent(projectedEvent(shared, projection), format, state, kind, apiVersion))}\n`;
  const representation = sharedEncodingKey(shared, format);
  if (representation === undefined) return encode();
  const key = `${projectionClass}/${representation}`;
  let lines = serialized.get(shared);
  if (lines === undefined) {
    lines = new Map();
    serialized.set(shared, lines);
  }
  let line = lines.get(key);
  if (line === undefined) {
    line = encode();
    lines.set(key, line);
  }
  return line;
}

/** The event with its object as the watcher's projection shows it. */
function projectedEvent(event: WatchEventOut, projection: RequesterProjection): WatchEventOut {
  if (event.type === 'BOOKMARK' || event.type === 'ERROR') return event;
  const object = projection.project(event.object);
  return object === event.object ? event : { type: event.type, object };
}

/** Object events in representations that do not depend on the watcher; undefined otherwise. */
function sharedEncodingKey(event: WatchEventOut, format: OutputFormat): string | undefined {
  if (event.type === 'BOOKMARK' || event.type === 'ERROR') return undefined;
  switch (format.kind) {
    case 'json':
      return 'json';
    case 'partialObjectMetadata':
      return `pom/${format.version}`;
    case 'table':
      return undefined;
  }
}

function encodeEvent(event: WatchEventOut, format: OutputFormat, state: ReturnType<typeof newWatchOutputState>, kind: string, apiVersion: string): object {
  switch (event.type) {
    case 'ERROR':
      return { type: 'ERROR', object: event.status.toStatus() };
    case 'BOOKMARK': {
      const bookmark: ApiObject = {
        kind,
        apiVersion,
        metadata: {
          resourceVersion: event.resourceVersion,
          ...(event.initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
        },
      };
      return { type: 'BOOKMARK', object: encodeWatchEventObject(format, bookmark, state) };
    }
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return { type: event.type, object: encodeWatchEventObject(format, event.object, state) };
  }
}

function contentType(format: OutputFormat): string {
  switch (format.kind) {
    case 'json':
      return 'application/json';
    case 'table':
      return `application/json;as=Table;v=${format.version};g=meta.k8s.io`;
    case 'partialObjectMetadata':
      return `application/json;as=PartialObjectMetadata;v=${format.version};g=meta.k8s.io`;
  }
}
