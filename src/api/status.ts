/**
 * metav1.Status errors with kube-apiserver's codes, reasons and wording
 * (k8s.io/apimachinery/pkg/api/errors). Every error the server returns is
 * one of these; handlers throw ApiError and the response stage encodes it.
 */
import { goQuote } from './go-strings.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: StatusReason;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** A request failure that the response stage renders as a metav1.Status. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason | undefined,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      ...(this.details === undefined ? {} : { details: withoutEmpty(this.details) }),
      code: this.code,
    };
  }
}

/** StatusDetails' string fields are `omitempty` in kube: an empty group or kind is absent, not "". */
function withoutEmpty(details: StatusDetails): StatusDetails {
  return Object.fromEntries(Object.entries(details).filter(([, value]) => value !== ''));
}

/** Identifies a resource in messages: "hostclaims.tenancy.metal3.io". */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

function qualified(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

export function unauthorized(message = 'Unauthorized'): ApiError {
  return new ApiError(401, 'Unauthorized', message);
}

/**
 * 403 with kube's wording. `reason` is the authorizer's text
 * (`User "x" cannot list resource ...`); a name prefixes the message as
 * `hostclaims.tenancy.metal3.io "n" is forbidden: ...`.
 */
export function forbidden(gr: GroupResource, name: string, reason: string): ApiError {
  const subject = name === '' ? `${qualified(gr)} is forbidden` : `${qualified(gr)} "${name}" is forbidden`;
  return new ApiError(403, 'Forbidden', `${subject}: ${reason}`, {
    ...(name === '' ? {} : { name }),
    group: gr.group,
    kind: gr.resource,
  });
}

/** 403 for non-resource URLs: kube's `forbidden: User "x" cannot get path "/p"`. */
export function forbiddenPath(reason: string): ApiError {
  return new ApiError(403, 'Forbidden', `forbidden: ${reason}`, {});
}

export function notFound(gr: GroupResource, name: string): ApiError {
  // kube's NewNotFound quotes with %q: a name with control characters is shown escaped.
  return new ApiError(404, 'NotFound', `${qualified(gr)} ${goQuote(name)} not found`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, { name, group: gr.group, kind: gr.resource });
}

/** kube's OptimisticLockErrorMsg conflict. */
export function conflict(gr: GroupResource, name: string, reason: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${reason}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export const optimisticLockMessage = 'the object has been modified; please apply your changes to the latest version and try again';

/** Generic 405 for a known resource whose verb is not served (go-restful's wording). */
export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function methodNotSupported(gr: GroupResource, verb: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualified(gr)}"`, {
    group: gr.group,
    kind: gr.resource,
  });
}

export function notAcceptable(message: string): ApiError {
  return new ApiError(406, 'NotAcceptable', message);
}

export function unsupportedMediaType(supported: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`,
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function tooManyRequests(retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds });
}

export function internalError(cause: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${cause}`, {
    causes: [{ message: cause }],
  });
}

export function serviceUnavailable(message: string): ApiError {
  return new ApiError(503, 'ServiceUnavailable', message);
}

export function timeout(message: string): ApiError {
  return new ApiError(504, 'Timeout', message);
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/** rest.BeforeDelete's answer to a uid precondition that does not hold. */
export function deleteUidMismatch(precondition: string, actual: string): string {
  return `the UID in the precondition (${precondition}) does not match the UID in record (${actual}). The object might have been deleted and then recreated`;
}
