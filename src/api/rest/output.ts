/**
 * Response representations for resource endpoints, as kube-apiserver serves
 * them for a custom resource: plain JSON, `meta.k8s.io` Table (kubectl get)
 * and PartialObjectMetadata(List) (garbage collector, quota, metadata
 * clients).
 *
 * Facts come from k8s.io/apiserver@v0.36.3 `pkg/endpoints/handlers`
 * (response.go, rest.go, negotiation/), the CRD table convertor in
 * k8s.io/apiextensions-apiserver (`registry/customresource/tableconvertor`)
 * and k8s.io/apimachinery (`util/duration`, `apis/meta/v1`). The wire shapes
 * below were checked against the Go encoders, including their quirks:
 * `columnDefinitions: null` on headerless tables, `object: null` for
 * includeObject=None and `items: null` for an empty PartialObjectMetadataList.
 *
 * Deliberate differences from kube for a CRD endpoint:
 * - Objects and lists are served as JSON or YAML; Table and
 *   PartialObjectMetadata(List) only as JSON: a YAML range asking for them,
 *   protobuf and CBOR ranges are skipped during negotiation (kube would
 *   serve them, and protobuf for PartialObjectMetadata(List)). Errors and a
 *   delete's Status are always JSON (kube encodes them as negotiated).
 * - `as=PartialObjectMetadataList` on a single-object request gets the 406
 *   kube returns for built-in types; for CRDs kube answers 500 "content is not
 *   a list" because an unstructured object passes its list check.
 * - The 406 for a wrong PartialObjectMetadata kind is raised at negotiation,
 *   kube raises it after reading storage; callers that want kube's ordering
 *   (404/403 first) negotiate after the read.
 */
import { negotiate, type MediaRange, type Offer } from '../negotiation.js';
import { badRequest, notAcceptable, type Status } from '../status.js';
import type { ApiObject, ManagedFieldsEntry, ObjectMeta, OwnerReference } from './types.js';

// ---------------------------------------------------------------------------
// Negotiation

export type MetaVersion = 'v1' | 'v1beta1';

/** What the request reads: one object (get, and write responses), a collection, or a watch stream. */
export type OutputTarget = 'object' | 'list' | 'watch';

/**
 * The negotiated representation. `partialObjectMetadata` means "metadata
 * only" in the shape that fits the target: PartialObjectMetadataList for a
 * list, PartialObjectMetadata for an object or each watch event.
 */
export type OutputFormat =
  | { readonly kind: 'json' }
  | { readonly kind: 'table'; readonly version: MetaVersion }
  | { readonly kind: 'partialObjectMetadata'; readonly version: MetaVersion };

/** What an object or list response may be: a representation above, or the object itself as YAML (kube's YAML serializer). */
export type ResponseFormat = OutputFormat | { readonly kind: 'yaml' };

/** The media types kube-apiserver lists for a custom resource (its 406 and 415 messages). */
export const ACCEPTED_MEDIA_TYPES: readonly string[] = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

const META_GROUP = 'meta.k8s.io';

export type Conversion = ResponseFormat | { readonly kind: 'partialObjectMetadataList'; readonly version: MetaVersion };

/**
 * What one Accept range asks for, or undefined when kube's CRD endpoint
 * would skip it (or this server does not serve it: YAML with a
 * conversion): a media type other than JSON or YAML (or a wildcard covering
 * JSON, the first of kube's serializers),
 * an unknown `stream=` or `sv=`, or any `as`/`g`/`v` that is not Table or
 * PartialObjectMetadata(List) in meta.k8s.io/v1 or v1beta1 (kube's
 * `AllowsMediaTypeTransform`; `g` or `v` alone also request a conversion).
 */
function conversionOf(range: MediaRange): Conversion | undefined {
  const json =
    (range.type === 'application' && (range.subtype === 'json' || range.subtype === '*')) ||
    (range.type === '*' && range.subtype === '*');
  const yaml = range.type === 'application' && range.subtype === 'yaml';
  if (!json && !yaml) return undefined;
  const { as, g, v, stream, sv } = range.params;
  if (stream !== undefined && stream !== '' && stream !== 'watch') return undefined;
  // AllowsServerVersion compares with the scope's meta group version (meta.k8s.io/v1).
  if (sv !== undefined && sv !== '' && sv !== 'v1') return undefined;
  if (as === undefined && g === undefined && v === undefined) return { kind: yaml ? 'yaml' : 'json' };
  if (yaml || g !== META_GROUP || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  if (as === 'Table') return { kind: 'table', version: v };
  if (as === 'PartialObjectMetadata') return { kind: 'partialObjectMetadata', version: v };
  if (as === 'PartialObjectMetadataList') return { kind: 'partialObjectMetadataList', version: v };
  return undefined;
}

function sameConversion(a: Conversion | undefined, b: Conversion): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  return a.kind === 'json' || a.kind === 'yaml' || b.kind === 'json' || b.kind === 'yaml' || a.version === b.version;
}

const STREAM_CONVERSIONS: readonly Conversion[] = [
  { kind: 'json' },
  ...(['v1', 'v1beta1'] as const).flatMap((version): Conversion[] => [
    { kind: 'table', version },
    { kind: 'partialObjectMetadata', version },
    { kind: 'partialObjectMetadataList', version },
  ]),
];

const offersOf = (conversions: readonly Conversion[]): readonly Offer<Conversion>[] =>
  conversions.map((value) => ({ value, matches: (range) => sameConversion(conversionOf(range), value) }));

/** kube's YAML serializer has no streaming form: a watch skips YAML ranges. */
const STREAM_OFFERS = offersOf(STREAM_CONVERSIONS);
const OFFERS = offersOf([...STREAM_CONVERSIONS, { kind: 'yaml' }]);

/**
 * Picks the representation for a resource response from the Accept header,
 * as kube-apiserver does for a custom resource: the first acceptable range in
 * preference order wins, ranges we cannot serve are skipped, and nothing
 * acceptable is a 406. A PartialObjectMetadata kind that does not fit the
 * target is a 406 rather than a fall-back to a later range (kube negotiates
 * first and fails while converting). On a watch, PartialObjectMetadataList
 * yields plain JSON: kube's per-event conversion fails and it sends each
 * object unconverted.
 *
 * Kube's rules do not depend on the resource served: an `as=` naming the
 * resource's own kind is skipped like any other unknown conversion.
 */
export function negotiateOutput(accept: string | undefined, target: 'watch'): OutputFormat;
export function negotiateOutput(accept: string | undefined, target: OutputTarget): ResponseFormat;
export function negotiateOutput(accept: string | undefined, target: OutputTarget): ResponseFormat {
  if (target === 'watch') return fitTarget(negotiate(accept, STREAM_OFFERS, ACCEPTED_MEDIA_TYPES), target);
  return fitTarget(negotiateConversion(accept), target);
}

/**
 * The negotiation alone (kube's NegotiateOutputMediaType, the 406 a write
 * gives before anything else): whether the conversion fits the target is
 * only known when the response is encoded.
 */
export function negotiateConversion(accept: string | undefined): Conversion {
  return negotiate(accept, OFFERS, ACCEPTED_MEDIA_TYPES);
}

/** The conversion applied to what the request reads; kube fails here, while encoding the response. */
export function fitTarget(chosen: Conversion, target: OutputTarget): ResponseFormat {
  switch (chosen.kind) {
    case 'json':
    case 'yaml':
    case 'table':
      return chosen;
    case 'partialObjectMetadata':
      if (target === 'list') {
        throw notAcceptable(
          'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)',
        );
      }
      return chosen;
    case 'partialObjectMetadataList':
      if (target === 'object') {
        throw notAcceptable(
          'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)',
        );
      }
      if (target === 'watch') return { kind: 'json' };
      return { kind: 'partialObjectMetadata', version: chosen.version };
  }
}

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

// ---------------------------------------------------------------------------
// Representations

export interface ListMeta {
  readonly resourceVersion?: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

/** ObjectMeta as kube re-encodes it from an unstructured object. */
export type PartialMeta = ObjectMeta & { selfLink?: string };

export interface PartialObjectMetadata {
  readonly kind: 'PartialObjectMetadata';
  readonly apiVersion: `meta.k8s.io/${MetaVersion}`;
  readonly metadata: PartialMeta;
}

export interface PartialObjectMetadataList {
  readonly kind: 'PartialObjectMetadataList';
  readonly apiVersion: `meta.k8s.io/${MetaVersion}`;
  readonly metadata: ListMeta;
  /** null, not [], when empty: kube encodes its nil slice. */
  readonly items: PartialObjectMetadata[] | null;
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
      cells: [stringField(object.metadata.name), ...all.map((c) => renderCell(c.type, c.value(object), now))],
      object: rowObject(object, options.includeObject, options.version),
    })),
  };
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

export function toPartialObjectMetadata(object: ApiObject, version: MetaVersion): PartialObjectMetadata {
  return { kind: 'PartialObjectMetadata', apiVersion: `${META_GROUP}/${version}`, metadata: partialMeta(object.metadata) };
}

export function toPartialObjectMetadataList(
  objects: readonly ApiObject[],
  listMeta: ListMeta,
  version: MetaVersion,
): PartialObjectMetadataList {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `${META_GROUP}/${version}`,
    metadata: listMetaOf(listMeta),
    items: objects.length === 0 ? null : objects.map((o) => toPartialObjectMetadata(o, version)),
  };
}

// ---------------------------------------------------------------------------
// Watch events

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

/** encoding/json output: map keys sorted, <, >, &, U+2028 and U+2029 escaped. */
function goJsonText(value: unknown): string {
  return JSON.stringify(sortKeys(value)).replace(/[<>&\u2028\u2029]/g, (c) =>
    `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys(value[k])]),
    );
  }
  return value;
}

// ---------------------------------------------------------------------------
// Time

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

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * Go's time.Parse(time.RFC3339, s) as metav1.Time uses it, in epoch
 * milliseconds (fractions kept below the millisecond), or undefined.
 */
function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  if (year === undefined || month === undefined || day === undefined) return undefined;
  if (hour === undefined || minute === undefined || second === undefined) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const offHours = Number(m[10]);
    const offMinutes = Number(m[11]);
    if (offHours > 24 || offMinutes > 60) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offHours * 60 + offMinutes);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const fraction = m[7] === undefined ? 0 : Number(`0.${m[7]}`) * 1000;
  return date.getTime() + fraction - offsetMinutes * 60_000;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** metav1.Time's encoding: UTC, whole seconds. */
function formatTime(ms: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}Z`;
}

/** A timestamp re-encoded as metav1.Time does; unset when empty or unparsable. */
function normalizedTime(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = parseRfc3339(value);
  return ms === undefined ? undefined : formatTime(ms);
}

// ---------------------------------------------------------------------------
// Metadata projection (meta.AsPartialObjectMetadata over unstructured getters)

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function int64Field(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const entries = Object.entries(value);
  if (entries.length === 0 || !entries.every(([, v]) => typeof v === 'string')) return undefined;
  return Object.fromEntries(entries) as Record<string, string>;
}

function stringList(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const items: unknown[] = value;
  return items.every((v): v is string => typeof v === 'string') ? items : undefined;
}

function ownerReferences(value: unknown): OwnerReference[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const refs: unknown[] = value;
  if (!refs.every(isRecord)) return undefined;
  return refs.map((ref) => ({
    apiVersion: stringField(ref['apiVersion']),
    kind: stringField(ref['kind']),
    name: stringField(ref['name']),
    uid: stringField(ref['uid']),
    ...(typeof ref['controller'] === 'boolean' ? { controller: ref['controller'] } : {}),
    ...(typeof ref['blockOwnerDeletion'] === 'boolean' ? { blockOwnerDeletion: ref['blockOwnerDeletion'] } : {}),
  }));
}

const MANAGED_FIELDS_STRINGS = ['manager', 'operation', 'apiVersion', 'fieldsType', 'subresource'] as const;

/** All entries re-encoded, or none if any entry fails to convert (as kube drops them). */
function managedFields(value: unknown): ManagedFieldsEntry[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const entries: unknown[] = value;
  const out: ManagedFieldsEntry[] = [];
  for (const entry of entries) {
    if (!isRecord(entry)) return undefined;
    for (const key of MANAGED_FIELDS_STRINGS) {
      const v = entry[key];
      if (v !== undefined && v !== null && typeof v !== 'string') return undefined;
    }
    const rawTime = entry['time'];
    const time = rawTime === undefined || rawTime === null ? undefined : normalizedTime(rawTime);
    if (rawTime !== undefined && rawTime !== null && time === undefined) return undefined;
    const fieldsV1 = entry['fieldsV1'];
    if (fieldsV1 !== undefined && fieldsV1 !== null && !isRecord(fieldsV1)) return undefined;
    const text = (key: (typeof MANAGED_FIELDS_STRINGS)[number]): Record<string, string> => {
      const v = stringField(entry[key]);
      return v === '' ? {} : { [key]: v };
    };
    out.push({
      ...text('manager'),
      ...text('operation'),
      ...text('apiVersion'),
      ...(time === undefined ? {} : { time }),
      ...text('fieldsType'),
      ...(isRecord(fieldsV1) ? { fieldsV1 } : {}),
      ...text('subresource'),
    });
  }
  return out;
}

/**
 * ObjectMeta as kube re-encodes it: known fields only, in Go's field order,
 * empty values omitted, timestamps normalized to UTC whole seconds, and
 * maps or lists with a wrongly typed member dropped whole.
 */
function partialMeta(metadata: ObjectMeta): PartialMeta {
  const raw: Record<string, unknown> = isRecord(metadata) ? metadata : {};
  const out: Record<string, unknown> = {};
  for (const key of ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion'] as const) {
    const v = stringField(raw[key]);
    if (v !== '') out[key] = v;
  }
  const generation = int64Field(raw['generation']);
  if (generation !== undefined && generation !== 0) out['generation'] = generation;
  const creationTimestamp = normalizedTime(raw['creationTimestamp']);
  if (creationTimestamp !== undefined) out['creationTimestamp'] = creationTimestamp;
  const deletionTimestamp = normalizedTime(raw['deletionTimestamp']);
  if (deletionTimestamp !== undefined) out['deletionTimestamp'] = deletionTimestamp;
  const grace = int64Field(raw['deletionGracePeriodSeconds']);
  if (grace !== undefined) out['deletionGracePeriodSeconds'] = grace;
  const optional: [string, unknown][] = [
    ['labels', stringMap(raw['labels'])],
    ['annotations', stringMap(raw['annotations'])],
    ['ownerReferences', ownerReferences(raw['ownerReferences'])],
    ['finalizers', stringList(raw['finalizers'])],
    ['managedFields', managedFields(raw['managedFields'])],
  ];
  for (const [key, value] of optional) if (value !== undefined) out[key] = value;
  return out;
}

function listMetaOf(listMeta: ListMeta | undefined): ListMeta {
  if (listMeta === undefined) return {};
  return {
    ...(listMeta.resourceVersion !== undefined && listMeta.resourceVersion !== ''
      ? { resourceVersion: listMeta.resourceVersion }
      : {}),
    ...(listMeta.continue !== undefined && listMeta.continue !== '' ? { continue: listMeta.continue } : {}),
    ...(listMeta.remainingItemCount !== undefined ? { remainingItemCount: listMeta.remainingItemCount } : {}),
  };
}
