/**
 * Turns kube-apiserver's answers about backing records into the errors a
 * client of the virtual resource would get from kube-apiserver serving it
 * directly: same code, reason and wording, with backing names, kinds and
 * the storage namespace replaced by the virtual ones. Anything that would
 * only reveal infrastructure (our own RBAC, server faults) becomes a generic
 * error; the details go to the log, not to the tenant.
 */
import { ApiError, badRequest, internalError, notFound, type GroupResource, type StatusCause } from '../api/status.js';
import { KubeApiError } from './kube-client.js';
import type { StorageMapping } from './storage-mapping.js';

export interface VirtualTarget {
  readonly gr: GroupResource;
  readonly backingPlural: string;
  readonly namespace: string;
  readonly name: string;
  readonly backingName: string;
}

const passThroughReasons = new Set([
  'AlreadyExists', 'Conflict', 'Invalid', 'BadRequest', 'Expired', 'Gone', 'TooManyRequests', 'RequestEntityTooLarge', 'UnsupportedMediaType', 'NotAcceptable',
  'MethodNotAllowed', 'Timeout',
]);
/**
 * Reasons whose details name no object in kube's answer: a resourceVersion
 * newer than the store's (k8s.io/apiserver storage.NewTooLargeResourceVersionError:
 * 504 Timeout, cause ResourceVersionTooLarge, retryAfterSeconds) says the same
 * about a record as about the object it stores.
 */
const unnamedReasons = new Set(['Timeout']);

export function translateBackingError(error: unknown, mapping: StorageMapping, target: VirtualTarget): ApiError {
  if (error instanceof ApiError) return error;
  if (!(error instanceof KubeApiError)) return storageFailure(error);
  const status = error.status;
  if (error.statusCode === 404 && (status?.reason === 'NotFound' || status === undefined)) return notFound(target.gr, target.name);
  if (status?.reason === undefined || !passThroughReasons.has(status.reason)) return storageFailure(error);
  const rename = renamer(mapping, target);
  const causes = status.details?.causes?.map((c): StatusCause => ({ ...c, ...(c.message === undefined ? {} : { message: rename(c.message) }) }));
  const retryAfter = status.details?.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: status.details.retryAfterSeconds };
  if (unnamedReasons.has(status.reason)) {
    return new ApiError(error.statusCode, status.reason as ApiError['reason'], rename(status.message ?? ''), { ...(causes === undefined ? {} : { causes }), ...retryAfter });
  }
  return new ApiError(error.statusCode, status.reason as ApiError['reason'], rename(status.message ?? ''), {
    ...(target.name === '' ? {} : { name: target.name }),
    group: target.gr.group,
    // kube names a kind or a resource here depending on the code path; keep which one it chose.
    kind: status.details?.kind === mapping.backing.kind ? mapping.virtual.kind : target.gr.resource,
    ...(status.details?.uid === undefined ? {} : { uid: status.details.uid }),
    ...(causes === undefined ? {} : { causes }),
    ...retryAfter,
  });
}

/**
 * kube-apiserver's field manager answers a bare 500 when it cannot build a
 * typed patch from an apply configuration (a field the schema does not
 * declare, a value of the wrong type: managedfields TypedConverter). That
 * is bad input, so the client gets the 400 kube should have given (issue
 * 15), worded as kube words it for the virtual object: `(<namespace of the
 * configuration>/<name>; <apiVersion>, Kind=<kind>)`.
 */
export function applyRefusal(error: unknown, mapping: StorageMapping, target: VirtualTarget, configuredNamespace: string): ApiError | undefined {
  if (!(error instanceof KubeApiError) || error.statusCode !== 500) return undefined;
  const problem = /^failed to create typed patch object \([^)]*\): ([\s\S]*)$/.exec(error.status?.message ?? '')?.[1];
  if (problem === undefined) return undefined;
  const identity = `${configuredNamespace}/${target.name}; ${mapping.virtualApiVersion}, Kind=${mapping.virtual.kind}`;
  return badRequest(`failed to create typed patch object (${identity}): ${renamer(mapping, target)(problem)}`);
}

/** A generic 500 for the client; the original stays attached for the log. */
function storageFailure(cause: unknown): ApiError {
  const error = internalError('storage request failed');
  error.cause = cause;
  return error;
}

/** Replaces every backing identifier in a kube message with its virtual counterpart. */
export function renamer(mapping: StorageMapping, target: VirtualTarget): (text: string) => string {
  const replacements: [string, string][] = [
    [`${target.backingPlural}.${mapping.backing.group}`, `${target.gr.resource}.${target.gr.group}`],
    [mapping.backingApiVersion, mapping.virtualApiVersion],
    [`${mapping.backing.kind}.${mapping.backing.group}`, `${mapping.virtual.kind}.${mapping.virtual.group}`],
    [mapping.backing.kind, mapping.virtual.kind],
    [mapping.backing.group, mapping.virtual.group],
    ...(target.backingName === '' ? [] : ([[`"${target.backingName}"`, `"${target.name}"`]] as [string, string][])),
    [`"${mapping.storageNamespace}"`, `"${target.namespace}"`],
  ];
  return (text) => replacements.reduce((acc, [from, to]) => acc.split(from).join(to), text);
}
