/**
 * Query parameters of list, watch, write and delete requests, parsed and
 * validated the way kube-apiserver does (ValidateListOptions, DeleteOptions
 * validation), with its wording.
 */
import { forbiddenField, invalid, notSupported, invalidValue, type FieldError } from '../field-errors.js';
import { parseFieldSelector, parseLabelSelector } from '../selectors.js';
import { badRequest } from '../status.js';
import { isReservedKey } from '../../backing/storage-mapping.js';
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

export function parseListParameters(query: URLSearchParams): ListParameters {
  const params: ListParameters = {
    watch: truthy(query.get('watch')),
    selection: parseSelection(query),
    limit: nonEmpty(query.get('limit')),
    continue: nonEmpty(query.get('continue')),
    resourceVersion: nonEmpty(query.get('resourceVersion')),
    resourceVersionMatch: nonEmpty(query.get('resourceVersionMatch')),
    sendInitialEvents: query.has('sendInitialEvents') ? truthy(query.get('sendInitialEvents')) : undefined,
    allowWatchBookmarks: truthy(query.get('allowWatchBookmarks')),
    timeoutSeconds: optionalInteger(query, 'timeoutSeconds'),
  };
  if (params.limit !== undefined && !/^\d+$/.test(params.limit)) throw badRequest(`invalid limit: ${params.limit}`);
  const errors = params.watch ? watchErrors(params) : listErrors(params);
  if (errors.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', errors);
  return params;
}

/** Label selector first, as kube parses them; a reserved key is refused once the selector is known to be well-formed. */
function parseSelection(query: URLSearchParams): SelectionPredicate {
  const labelSelectorText = query.get('labelSelector') ?? '';
  const label = parseLabelSelector(labelSelectorText);
  rejectReservedSelectorKeys(labelSelectorText);
  return new SelectionPredicate(label, parseFieldSelector(query.get('fieldSelector') ?? '', selectableFields));
}

/** Bookkeeping labels are invisible: selecting on them would reveal them, so it is refused. */
function rejectReservedSelectorKeys(selector: string): void {
  const keys = selector.match(/[A-Za-z0-9][-A-Za-z0-9_.]*\/[-A-Za-z0-9_.]+/g) ?? [];
  const reserved = keys.find((key) => isReservedKey(key));
  if (reserved !== undefined) throw badRequest(`unable to parse requirement: label key "${reserved}" uses a reserved prefix`);
}

function listErrors(p: ListParameters): FieldError[] {
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

function watchErrors(p: ListParameters): FieldError[] {
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
  if (p.sendInitialEvents === true && !p.allowWatchBookmarks) {
    errors.push(forbiddenField('allowWatchBookmarks', 'allowWatchBookmarks must be set to true when sendInitialEvents is true'));
  }
  return errors;
}

export interface WriteParameters {
  readonly dryRun: readonly string[] | undefined;
  readonly fieldManager: string | undefined;
  readonly fieldValidation: string | undefined;
  readonly force: string | undefined;
}

export function parseWriteParameters(query: URLSearchParams): WriteParameters {
  const dryRun = query.getAll('dryRun');
  const fieldValidation = nonEmpty(query.get('fieldValidation'));
  if (fieldValidation !== undefined && !['Strict', 'Warn', 'Ignore'].includes(fieldValidation)) {
    throw badRequest(`fieldValidation must be one of Ignore, Warn, or Strict; got ${fieldValidation}`);
  }
  const fieldManager = nonEmpty(query.get('fieldManager'));
  if (fieldManager !== undefined && (fieldManager.length > 128 || !/^[\x20-\x7e]+$/.test(fieldManager))) {
    throw invalid('meta.k8s.io', 'PatchOptions', '', [invalidValue('fieldManager', fieldManager, 'must be at most 128 printable characters')]);
  }
  return { dryRun: dryRun.length === 0 ? undefined : dryRun, fieldManager, fieldValidation, force: nonEmpty(query.get('force')) };
}

export interface DeleteParameters {
  readonly propagationPolicy: string | undefined;
  readonly orphanDependents: boolean | undefined;
  readonly gracePeriodSeconds: number | undefined;
  readonly preconditions: { uid?: string; resourceVersion?: string } | undefined;
  readonly dryRun: readonly string[] | undefined;
}

/** DeleteOptions from the body (if any) overlaid by query parameters, as kube decodes them. */
export function parseDeleteParameters(query: URLSearchParams, body: unknown): DeleteParameters {
  const fromBody = (body ?? {}) as {
    propagationPolicy?: string;
    orphanDependents?: boolean;
    gracePeriodSeconds?: number;
    preconditions?: { uid?: string; resourceVersion?: string };
    dryRun?: string[];
  };
  const propagationPolicy = nonEmpty(query.get('propagationPolicy')) ?? fromBody.propagationPolicy;
  if (propagationPolicy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(propagationPolicy)) {
    throw invalid('meta.k8s.io', 'DeleteOptions', '', [notSupported('propagationPolicy', propagationPolicy, ['Foreground', 'Background', 'Orphan', 'nil'])]);
  }
  const orphanDependents = query.has('orphanDependents') ? truthy(query.get('orphanDependents')) : fromBody.orphanDependents;
  if (orphanDependents !== undefined && propagationPolicy !== undefined) {
    throw invalid('meta.k8s.io', 'DeleteOptions', '', [
      invalidValue('propagationPolicy', propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'),
    ]);
  }
  const dryRun = query.getAll('dryRun');
  return {
    propagationPolicy,
    orphanDependents,
    gracePeriodSeconds: optionalInteger(query, 'gracePeriodSeconds') ?? fromBody.gracePeriodSeconds,
    preconditions: fromBody.preconditions,
    dryRun: dryRun.length > 0 ? dryRun : fromBody.dryRun,
  };
}

function nonEmpty(value: string | null): string | undefined {
  return value === null || value === '' ? undefined : value;
}

function truthy(value: string | null): boolean {
  return value !== null && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

function optionalInteger(query: URLSearchParams, name: string): number | undefined {
  const value = nonEmpty(query.get(name));
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw badRequest(`invalid ${name}: ${value}`);
  return Number(value);
}
