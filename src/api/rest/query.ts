/**
 * Query parameters of list, watch, write and delete requests, parsed and
 * validated the way kube-apiserver does (ValidateListOptions, DeleteOptions
 * validation), with its wording.
 */
import { forbiddenField, invalid, notSupported, invalidValue, required, type FieldError } from '../field-errors.js';
import { fieldManagerErrors } from '../object-meta.js';
import { parseFieldSelector } from '../field-selector.js';
import { parseLabelSelector } from '../label-selector.js';
import { badRequest } from '../status.js';
import { isReservedKey } from '../reserved-keys.js';
import { SelectionPredicate, selectableFields } from './selection.js';

export interface ListParameters {
  readonly watch: boolean;
  /** The one selection every read path of this request applies. */
  readonly selection: SelectionPredicate;
  readonly limit: string | undefined;
  readonly continue: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly resourceVersionMatch: string | undefined;
  readonly sendInitialEvents: boolean | undefined;
  readonly allowWatchBookmarks: boolean;
  readonly timeoutSeconds: number | undefined;
}

/** Which namespace a list, watch or deletecollection reads, after the URL and the field selector. */
export interface ListScope {
  /** undefined: all namespaces. */
  readonly namespace: string | undefined;
}

/**
 * ListOptions in the order kube's listOpts reads them: DecodeParameters
 * (integers, then the label and field selectors' syntax: 400s), then
 * SetListOptionsDefaults and ValidateListOptions (422), then the CRD's field
 * label conversion (400 `field label not supported`), then, in storage, the
 * resourceVersion.
 */
export function parseListParameters(query: URLSearchParams): ListParameters {
  const timeoutSeconds = queryInt64(query, 'timeoutSeconds');
  const limit = queryInt64(query, 'limit');
  const labelSelectorText = query.get('labelSelector') ?? '';
  const label = parseLabelSelector(labelSelectorText);
  rejectReservedSelectorKeys(labelSelectorText);
  const fieldSelectorText = query.get('fieldSelector') ?? '';
  parseFieldSelector(fieldSelectorText, 'any');
  const options = withWatchListDefaults({
    watch: queryBool(query, 'watch') ?? false,
    limit: positiveLimit(limit),
    continue: nonEmpty(query.get('continue')),
    resourceVersion: nonEmpty(query.get('resourceVersion')),
    resourceVersionMatch: nonEmpty(query.get('resourceVersionMatch')),
    sendInitialEvents: queryBool(query, 'sendInitialEvents'),
    allowWatchBookmarks: queryBool(query, 'allowWatchBookmarks') ?? false,
    timeoutSeconds,
  });
  const errors = options.watch ? watchErrors(options) : listErrors(options);
  if (errors.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', errors);
  const params = { ...options, selection: new SelectionPredicate(label, parseFieldSelector(fieldSelectorText, selectableFields)) };
  // The storage layer parses the resourceVersion after the options are validated.
  if (params.resourceVersion !== undefined) checkReadResourceVersion(params.resourceVersion, params.watch ? 'watch' : 'list');
  return params;
}

type DecodedListOptions = Omit<ListParameters, 'selection'>;

/**
 * SetListOptionsDefaults with WatchList on (the default since 1.34): a watch
 * from "" or "0" that names neither sendInitialEvents nor
 * resourceVersionMatch is a watch-list from NotOlderThan. It then refuses
 * `continue`, and marks the end of its initial events for a client that
 * allows bookmarks.
 */
function withWatchListDefaults(options: DecodedListOptions): DecodedListOptions {
  if (options.sendInitialEvents !== undefined || options.resourceVersionMatch !== undefined) return options;
  const legacy = options.resourceVersion === undefined || options.resourceVersion === '0';
  return options.watch && legacy ? { ...options, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } : options;
}

/** ListOptions.limit is an int64; zero or less asks for everything. */
function positiveLimit(limit: number | undefined): string | undefined {
  return limit === undefined || limit <= 0 ? undefined : String(limit);
}

/**
 * The resourceVersion of a get or list, parsed as the storage layer's
 * APIObjectVersioner.ParseResourceVersion does. A list answers kube's 400
 * (`invalid resource version: ...`); on a get or a watch kube-apiserver
 * passes the storage.InvalidError through as a bare 500, and bad input gets
 * the 400 kube should have given (issue 15), with kube's wording. Checked
 * before a watch answers its 200.
 */
export function checkReadResourceVersion(text: string, verb: 'get' | 'list' | 'watch'): void {
  if (/^[0-9]+$/.test(text) && BigInt(text) < 2n ** 64n) return;
  const problem = /^[0-9]+$/.test(text) ? 'value out of range' : 'invalid syntax';
  const detail = `resourceVersion: Invalid value: ${JSON.stringify(text)}: strconv.ParseUint: parsing ${JSON.stringify(text)}: ${problem}`;
  throw badRequest(verb === 'list' ? `invalid resource version: ${detail}` : detail);
}

/** Bookkeeping labels are invisible: selecting on them would reveal them, so it is refused. */
function rejectReservedSelectorKeys(selector: string): void {
  const keys = selector.match(/[A-Za-z0-9][-A-Za-z0-9_.]*\/[-A-Za-z0-9_.]+/g) ?? [];
  const reserved = keys.find((key) => isReservedKey(key));
  if (reserved !== undefined) throw badRequest(`unable to parse requirement: label key "${reserved}" uses a reserved prefix`);
}

/** ValidateListOptions for a list. */
function listErrors(p: DecodedListOptions): FieldError[] {
  const errors: FieldError[] = [];
  const match = p.resourceVersionMatch;
  if (match !== undefined) {
    if (p.resourceVersion === undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (p.continue !== undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errors.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && p.resourceVersion === '0') errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (p.sendInitialEvents !== undefined) errors.push(forbiddenField('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errors;
}

/** validateWatchOptions (WatchList on). */
function watchErrors(p: DecodedListOptions): FieldError[] {
  const errors: FieldError[] = [];
  const match = p.resourceVersionMatch;
  if (p.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errors.push(forbiddenField('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (match !== undefined) {
    if (p.sendInitialEvents === undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errors.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (p.continue !== undefined) errors.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return errors;
}

export interface WriteParameters {
  readonly dryRun: readonly string[] | undefined;
  readonly fieldManager: string | undefined;
  readonly fieldValidation: string | undefined;
  readonly force: string | undefined;
}

/** Which options a write decodes: CreateOptions, UpdateOptions, or PatchOptions with its patch type. */
export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | { readonly patchType: string };

const fieldValidationValues = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * Create/Update/PatchOptions from the query, validated as
 * ValidateCreateOptions/ValidateUpdateOptions/ValidatePatchOptions do
 * (422 naming the options kind), before anything is read or written.
 */
export function parseWriteParameters(query: URLSearchParams, kind: WriteOptionsKind): WriteParameters {
  const dryRun = query.getAll('dryRun');
  const fieldValidation = nonEmpty(query.get('fieldValidation'));
  const fieldManager = nonEmpty(query.get('fieldManager'));
  const force = query.has('force') ? (query.get('force') ?? '') : undefined;
  const errors: FieldError[] = [];
  if (typeof kind !== 'string') {
    if (kind.patchType === 'application/apply-patch+yaml') {
      if (fieldManager === undefined) errors.push(required('fieldManager', 'is required for apply patch'));
    } else if (force !== undefined) {
      errors.push(forbiddenField('force', 'may not be specified for non-apply patch'));
    }
  }
  errors.push(...fieldManagerErrors(fieldManager ?? '', 'fieldManager'));
  errors.push(...dryRunErrors(dryRun));
  if (fieldValidation !== undefined && !fieldValidationValues.includes(fieldValidation)) {
    errors.push(notSupported('fieldValidation', fieldValidation, fieldValidationValues));
  }
  if (errors.length > 0) throw invalid('meta.k8s.io', typeof kind === 'string' ? kind : 'PatchOptions', '', errors);
  return {
    dryRun: dryRun.length === 0 ? undefined : dryRun,
    fieldManager,
    fieldValidation,
    force: force === undefined || !goBool(force) ? undefined : 'true',
  };
}

function dryRunErrors(dryRun: readonly string[]): FieldError[] {
  return dryRun.every((value) => value === 'All') ? [] : [notSupported('dryRun', dryRun, ['All'])];
}

export interface DeleteParameters {
  readonly propagationPolicy: string | undefined;
  readonly orphanDependents: boolean | undefined;
  readonly gracePeriodSeconds: number | undefined;
  readonly preconditions: { uid?: string; resourceVersion?: string } | undefined;
  readonly dryRun: readonly string[] | undefined;
}

/**
 * DeleteOptions from the body when there is one, else from the query (kube
 * reads one or the other), validated as ValidateDeleteOptions does.
 */
export function parseDeleteParameters(query: URLSearchParams, body: unknown): DeleteParameters {
  const options = body === undefined ? deleteOptionsFromQuery(query) : deleteOptionsFromBody(body);
  const errors: FieldError[] = [];
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    errors.push(invalidValue('propagationPolicy', options.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  const policy = options.propagationPolicy;
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    errors.push(notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  errors.push(...dryRunErrors(options.dryRun ?? []));
  if (errors.length > 0) throw invalid('meta.k8s.io', 'DeleteOptions', '', errors);
  return options;
}

/** Convert_url_Values_To_v1_DeleteOptions: a present propagationPolicy is set even when empty; uid and resourceVersion are preconditions. */
function deleteOptionsFromQuery(query: URLSearchParams): DeleteParameters {
  const dryRun = query.getAll('dryRun');
  const orphan = query.getAll('orphanDependents');
  const uid = nonEmpty(query.get('uid'));
  const resourceVersion = nonEmpty(query.get('resourceVersion'));
  return {
    propagationPolicy: query.get('propagationPolicy') ?? undefined,
    orphanDependents: orphan.length === 0 ? undefined : goBool(orphan[0] ?? ''),
    gracePeriodSeconds: queryInt64(query, 'gracePeriodSeconds'),
    preconditions: uid === undefined && resourceVersion === undefined ? undefined : { ...(uid === undefined ? {} : { uid }), ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    dryRun: dryRun.length > 0 ? dryRun : undefined,
  };
}

/** A DeleteOptions body: only its known fields, each of the type kube decodes it into. */
function deleteOptionsFromBody(body: unknown): DeleteParameters {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest(`json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type v1.DeleteOptions`);
  }
  const fields = body as Record<string, unknown>;
  const typed = <T>(name: string, check: (value: unknown) => value is T, goType: string): T | undefined => {
    const value = fields[name];
    if (value === undefined || value === null) return undefined;
    if (check(value)) return value;
    throw badRequest(`json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go struct field DeleteOptions.${name} of type ${goType}`);
  };
  const isString = (v: unknown): v is string => typeof v === 'string';
  const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
  const isInt64 = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 2 ** 63;
  const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
  const isPreconditions = (v: unknown): v is { uid?: string; resourceVersion?: string } =>
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => x === null || typeof x === 'string');
  return {
    propagationPolicy: typed('propagationPolicy', isString, 'v1.DeletionPropagation'),
    orphanDependents: typed('orphanDependents', isBoolean, 'bool'),
    gracePeriodSeconds: typed('gracePeriodSeconds', isInt64, 'int64'),
    preconditions: typed('preconditions', isPreconditions, 'v1.Preconditions'),
    dryRun: typed('dryRun', isStrings, '[]string'),
  };
}

/** strconv.ParseInt(value, 10, 64) on the first value, with its error text (a 400, as DecodeParameters answers). */
function queryInt64(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!/^[+-]?\d+$/.test(value)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  const parsed = BigInt(value);
  if (parsed >= 2n ** 63n || parsed < -(2n ** 63n)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`);
  return Number(parsed);
}

function nonEmpty(value: string | null): string | undefined {
  return value === null || value === '' ? undefined : value;
}

/** Convert_Slice_string_To_Pointer_bool on the first value: absent is undefined, anything but "0" and "false" is true, even "". */
function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name);
  return value === null ? undefined : goBool(value);
}

/** Convert_Slice_string_To_bool: only "0" and "false" (any case) are false. */
function goBool(value: string): boolean {
  return value !== '0' && value.toLowerCase() !== 'false';
}
