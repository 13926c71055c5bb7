/**
 * The `object` of each watch event in the negotiated representation (one-row
 * Tables, PartialObjectMetadata), as the watch embedded encoder of
 * k8s.io/apiserver@v0.36.3 `pkg/endpoints/handlers/response.go`
 * (watchEmbeddedEncoder, doTransformObject) converts every event.
 */
import type { Status } from '../status.js';
import type { OutputFormat } from './output-format.js';
import { toPartialObjectMetadata, type PartialObjectMetadata } from './partial-object-metadata.js';
import { toTable, type IncludeObject, type Table, type TableColumn } from './table.js';
import type { ApiObject } from './types.js';

/** Per-watch encoding state: the table settings and whether headers went out. */
export interface WatchOutputState {
  readonly columns: readonly TableColumn[];
  readonly includeObject: IncludeObject;
  readonly now: () => number;
  /** Set by the first encoded event of a Table watch; later tables carry no columnDefinitions. */
  headersSent: boolean;
}

export function newWatchOutputState(
  options: { columns?: readonly TableColumn[]; includeObject?: IncludeObject; now?: () => number } = {},
): WatchOutputState {
  return {
    columns: options.columns ?? [],
    includeObject: options.includeObject ?? 'Metadata',
    now: options.now ?? Date.now,
    headersSent: false,
  };
}

function isStatus(object: ApiObject | Status): object is Status {
  return object.kind === 'Status' && object.apiVersion === 'v1';
}

/**
 * The `object` of one watch event in the negotiated representation. ERROR
 * events' Status objects pass through unchanged. For a Table, each event is a
 * one-row table whose metadata carries the object's resourceVersion; only the
 * first event of the watch, whatever its type (kube flips the flag after any
 * event, Status included), carries columnDefinitions.
 */
export function encodeWatchEventObject(
  format: OutputFormat,
  object: ApiObject | Status,
  state: WatchOutputState,
): ApiObject | Status | PartialObjectMetadata | Table {
  switch (format.kind) {
    case 'json':
      return object;
    case 'partialObjectMetadata':
      return isStatus(object) ? object : toPartialObjectMetadata(object, format.version);
    case 'table': {
      const noHeaders = state.headersSent;
      state.headersSent = true;
      if (isStatus(object)) return object;
      const resourceVersion = object.metadata.resourceVersion;
      return toTable([object], state.columns, {
        includeObject: state.includeObject,
        version: format.version,
        listMeta: resourceVersion === undefined ? {} : { resourceVersion },
        noHeaders,
        now: state.now,
      });
    }
  }
}
