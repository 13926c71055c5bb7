/**
 * The `meta.k8s.io` Table kube-apiserver serves a custom resource in for
 * `as=Table` (kubectl get), laid out and rendered like the CRD table
 * convertor of k8s.io/apiextensions-apiserver
 * (`registry/customresource/tableconvertor`), with the Age column as
 * k8s.io/apimachinery `util/duration` words it and the `includeObject` option
 * as k8s.io/apiserver@v0.36.3 `pkg/endpoints/handlers/response.go` reads it. The
 * wire shape was checked against the Go encoders, quirks included:
 * `columnDefinitions: null` on headerless tables, `object: null` for
 * includeObject=None.
 */
import { goJsonText } from '../go-strings.js';
import { parseRfc3339 } from '../go-time.js';
import { badRequest } from '../status.js';
import { listMetaOf, META_GROUP, toPartialObjectMetadata, type ListMeta, type MetaVersion, type PartialObjectMetadata } from './partial-object-metadata.js';
import type { ApiObject } from './types.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/**
 * The `includeObject` table option: first value, empty or absent means
 * Metadata. kube only reads (and validates) it when a Table was negotiated,
 * so call this only for `format.kind === 'table'`.
 */
export function parseIncludeObject(query: URLSearchParams): IncludeObject {
  const value = query.get('includeObject');
  switch (value) {
    case null:
    case '':
    case 'Metadata':
      return 'Metadata';
    case 'None':
    case 'Object':
      return value;
    default:
      throw badRequest(
        `Unable to convert to Table as requested: includeObject: Invalid value: ${goJsonText(value)}: must be 'Metadata', 'Object', 'None', or empty`,
      );
  }
}

export interface TableColumnDefinition {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

export interface TableRow {
  readonly cells: unknown[];
  /** null for includeObject=None (kube encodes the empty RawExtension as null). */
  readonly object: PartialObjectMetadata | ApiObject | null;
}

export interface Table {
  readonly kind: 'Table';
  readonly apiVersion: `meta.k8s.io/${MetaVersion}`;
  readonly metadata: ListMeta;
  /** null when headers are suppressed (watch events after the first). */
  readonly columnDefinitions: TableColumnDefinition[] | null;
  readonly rows: TableRow[];
}

/**
 * A printer column a resource contributes between Name and Age, with the
 * CRD `additionalPrinterColumns` semantics. `value` plays the JSONPath:
 * return undefined when the path is absent (cell null) or the JSON value
 * found (null included); the cell is then rendered for `type` exactly like
 * the CRD table convertor.
 */
export interface TableColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly format?: string;
  readonly description: string;
  readonly priority: number;
  readonly value: (object: ApiObject) => unknown;
}

export interface TableOptions {
  readonly includeObject: IncludeObject;
  readonly version: MetaVersion;
  /**
   * The collection's list metadata. For a single object (get, watch event)
   * kube puts the object's resourceVersion here.
   */
  readonly listMeta?: ListMeta;
  /** Omit columnDefinitions (encoded as null). */
  readonly noHeaders?: boolean;
  /** Clock for the Age column, in epoch milliseconds; defaults to Date.now. */
  readonly now?: () => number;
}

// Our own wording: kube's column descriptions are documentation, not protocol.
const NAME_DESCRIPTION = 'Name of the object, unique within its namespace.';
const AGE_DESCRIPTION = 'Time since the object was created.';

const AGE_COLUMN: TableColumn = {
  name: 'Age',
  type: 'date',
  description: AGE_DESCRIPTION,
  priority: 0,
  value: (object) => object.metadata.creationTimestamp,
};

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * A `meta.k8s.io` Table in the CRD convertor's layout: Name (format `name`),
 * the resource's columns, then Age rendered server-side as a human duration.
 * Row objects follow includeObject, except that the initial-events-end
 * bookmark always carries its metadata unless the full object was asked for.
 */
export function toTable(objects: readonly ApiObject[], columns: readonly TableColumn[], options: TableOptions): Table {
  const all = [...columns, AGE_COLUMN];
  const now = (options.now ?? Date.now)();
  return {
    kind: 'Table',
    apiVersion: `${META_GROUP}/${options.version}`,
    metadata: listMetaOf(options.listMeta),
    columnDefinitions:
      options.noHeaders === true
        ? null
        : [
            { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
            ...all.map((c) => ({
              name: c.name,
              type: c.type,
              format: c.format ?? '',
              description: c.description,
              priority: c.priority,
            })),
          ],
    rows: objects.map((object) => ({
      cells: [nameCell(object), ...all.map((c) => renderCell(c.type, c.value(object), now))],
      object: rowObject(object, options.includeObject, options.version),
    })),
  };
}

/** The Name cell: the object's name, or "" when it has none. */
function nameCell(object: ApiObject): string {
  const name: unknown = object.metadata.name;
  return typeof name === 'string' ? name : '';
}

function rowObject(
  object: ApiObject,
  includeObject: IncludeObject,
  version: MetaVersion,
): PartialObjectMetadata | ApiObject | null {
  if (includeObject === 'Object') return object;
  if (includeObject === 'Metadata' || object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true') {
    return toPartialObjectMetadata(object, version);
  }
  return null;
}

// ---------------------------------------------------------------------------
// Cells (CRD table convertor semantics)

function renderCell(type: TableColumn['type'], value: unknown, now: number): unknown {
  if (value === undefined) return null;
  switch (type) {
    case 'string':
      return stringCell(value);
    case 'integer':
      // JSON integers decode to int64, others to float64 which int64() truncates.
      return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null;
  }
}

/** What the JSONPath printer writes for a value found at the path. */
function stringCell(value: unknown): string | null {
  if (value === null) return '<no value>';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return goNumberText(value);
  if (typeof value === 'object') return goJsonText(value);
  return null;
}

function dateCell(text: string, now: number): string {
  if (text === '' || text === 'null') return '<unknown>';
  const at = parseRfc3339(text);
  return at === undefined ? '<invalid>' : humanDuration(now - at);
}

/**
 * fmt's %v of a decoded JSON number: integers (int64 in unstructured) in
 * decimal, other floats in %g with shortest digits, exponent form from 1e6.
 */
function goNumberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  const [mantissa = '', exponentText = '0'] = n.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(n);
}

// ---------------------------------------------------------------------------
// Age

/**
 * apimachinery's duration.HumanDuration for a duration in milliseconds:
 * ~2-3 significant figures ("119s", "3m10s", "2d1h", "2y1d"); anything
 * more than a second in the future (2 s tolerance for clock skew) is
 * "<invalid>".
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}
