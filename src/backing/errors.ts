/**
 * Turns kube-apiserver's answers about backing records into the errors a
 * client of the virtual resource would get from kube-apiserver serving it
 * directly: same code, reason and wording, with backing names, kinds and
 * the storage namespace replaced by the virtual ones. Anything that would
 * only reveal infrastructure (our own RBAC, server faults) becomes a generic
 * error; the details go to the log, not to the tenant.
 */
import { ApiError, badRequest, internalError, notFound, type GroupResource, type StatusCause } from '../api/status.js';
import { KubeApiError, KubeUnavailableError } from './kube-client.js';
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
  if (!(error instanceof KubeApiError)) return dependencyFailure(error, 'storage') ?? storageFailure(error);
  const status = error.status;
  if (error.statusCode === 404 && status?.reason === 'NotFound') return notFound(target.gr, target.name);
  if (status?.reason === undefined || !passThroughReasons.has(status.reason)) return dependencyFailure(error, 'storage') ?? storageFailure(error);
  const rename = renamer(mapping, target);
  const causes = status.details?.causes?.map((c): StatusCause => ({ ...c, ...(c.message === undefined ? {} : { message: rename(c.message) }) }));
  const retryAfter = status.details?.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: status.details.retryAfterSeconds };
  // A list's errors (410 Expired for a compacted resourceVersion) name no object: neither does the translation.
  if (status.details === undefined) return new ApiError(error.statusCode, status.reason as ApiError['reason'], rename(status.message ?? ''));
  if (unnamedReasons.has(status.reason)) {
    return new ApiError(error.statusCode, status.reason as ApiError['reason'], rename(status.message ?? ''), { ...(causes === undefined ? {} : { causes }), ...retryAfter });
  }
  return new ApiError(error.statusCode, status.reason as ApiError['reason'], rename(status.message ?? ''), {
    ...(target.name === '' ? {} : { name: target.name }),
    group: target.gr.group,
    // kube names a kind or a resource here depending on the code path; keep which one it chose.
    kind: status.details.kind === mapping.backing.kind ? mapping.virtual.kind : target.gr.resource,
    ...(status.details.uid === undefined ? {} : { uid: status.details.uid }),
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

/** What depended on kube-apiserver, named in the answer. */
export type Dependency = 'storage' | 'authorization' | 'authentication';

/** Seconds a client waits before retrying a request kube-apiserver could not serve (client-go honours Retry-After on 5xx). */
const retryAfterSeconds = 1;

/**
 * kube-apiserver could not serve a call made for a request: a retriable
 * 503 or 504 with Retry-After, never an answer that blames the requester
 * (k8s.io/apiserver would give a plain 500 for a failed delegated
 * authorization and a 401 for a failed TokenReview; both are final to
 * clients, so this server answers what kube-aggregator answers for an
 * unreachable backend instead; docs/reliability.md, "Dependency faults").
 * undefined: an answer about the request itself, for the caller to map.
 *
 * - no answer in time: 504 Timeout (a write may or may not have happened);
 * - connection refused, reset or closed: 503 ServiceUnavailable;
 * - kube-apiserver's own 503/504 (etcd unavailable, its request timeout);
 * - a 404 that is not a Status: the path is not served right now
 *   (kube-apiserver starting, its CRDs not loaded yet);
 * - 401/403: kube-apiserver refused this server's own identity (its RBAC
 *   not loaded yet after a restart, or this server's RBAC broken): not the
 *   requester's fault, and the cause is logged, not shown.
 * The cause stays attached for the log; the client sees no internal text.
 */
export function dependencyFailure(error: unknown, dependency: Dependency): ApiError | undefined {
  let failure: ApiError | undefined;
  if (error instanceof KubeUnavailableError) {
    failure = error.timedOut ? timedOut(dependency) : unavailableNow(dependency);
  } else if (error instanceof KubeApiError) {
    const code = error.statusCode;
    if (code === 504) failure = timedOut(dependency);
    else if (code === 503 || code === 401 || code === 403 || (code === 404 && error.status === undefined)) failure = unavailableNow(dependency);
  }
  if (failure !== undefined) failure.cause = error;
  return failure;
}

/** 504 with Retry-After: the dependency did not answer in time (a write may or may not have been applied). */
export function timedOut(dependency: Dependency): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: ${dependency} did not answer within the allotted time; please try again`, { retryAfterSeconds });
}

/** 503 with Retry-After: the dependency cannot give a trustworthy answer now. */
export function unavailableNow(dependency: Dependency): ApiError {
  return new ApiError(503, 'ServiceUnavailable', `the server is currently unable to handle the request: ${dependency} is unavailable; please try again`, { retryAfterSeconds });
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
