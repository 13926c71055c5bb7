/**
 * One isolation case: a request (or a short sequence) and the exact answer
 * expected, in kube-apiserver's words (k8s.io/apiserver
 * endpoints/handlers/responsewriters/errors.go for denials,
 * k8s.io/apimachinery/pkg/api/errors for the rest). Outcomes are small
 * plain objects so that the report can print both sides on one line.
 */
import type { RawResponse } from '../support/raw-http.js';
import type { World } from './world.js';

export type Outcome = Readonly<Record<string, unknown>>;

export interface IsolationCase {
  readonly name: string;
  /** Who sends what, on one line. */
  readonly request: string;
  readonly expected: Outcome;
  readonly run: (world: World) => Promise<Outcome>;
  /**
   * A defect this case exposes and that is not fixed yet: the case still
   * asserts the correct answer and runs as `it.fails` (see docs/reliability.md).
   */
  readonly knownDefect?: string;
}

export interface CaseGroup {
  readonly name: string;
  readonly cases: readonly IsolationCase[];
}

interface StatusBody {
  kind?: string;
  reason?: string;
  message?: string;
}

/** A Status answer as code, reason and message; anything else as code and body. */
export function statusOf(response: RawResponse): Outcome {
  const body = response.json as StatusBody | undefined;
  if (body?.kind !== 'Status') return { code: response.status, body: response.body.slice(0, 300) };
  return { code: response.status, reason: body.reason, message: body.message };
}

interface ListBody {
  kind?: string;
  items?: { metadata: { name: string; namespace?: string } }[];
}

/** A list answer as code and its items' namespace/name, sorted; anything else as its Status. */
export function namesOf(response: RawResponse): Outcome {
  const body = response.json as ListBody | undefined;
  if (response.status !== 200 || body?.items === undefined) return statusOf(response);
  return { code: 200, names: body.items.map((item) => `${item.metadata.namespace ?? ''}/${item.metadata.name}`).sort() };
}

/** An object answer as code and namespace/name. */
export function objectOf(response: RawResponse): Outcome {
  const body = response.json as { kind?: string; metadata?: { name?: string; namespace?: string } } | undefined;
  if (response.status >= 300 || body?.kind === 'Status' || body?.metadata === undefined) return statusOf(response);
  return { code: response.status, object: `${body.metadata.namespace ?? ''}/${body.metadata.name ?? ''}` };
}

export interface Denied {
  readonly user: string;
  readonly verb: string;
  readonly resource: 'hostclaims' | 'hardwaredata';
  readonly subresource?: string;
  /** Absent: the cluster scope. */
  readonly namespace?: string;
  readonly name?: string;
}

/** kube's 403 for an authorization denial (responsewriters.Forbidden with RBAC's empty reason). */
export function forbidden(denied: Denied): Outcome {
  const resource = denied.subresource === undefined ? denied.resource : `${denied.resource}/${denied.subresource}`;
  const scope = denied.namespace === undefined ? 'at the cluster scope' : `in the namespace "${denied.namespace}"`;
  const reason = `User "${denied.user}" cannot ${denied.verb} resource "${resource}" in API group "tenancy.metal3.io" ${scope}`;
  const qualified = `${denied.resource}.tenancy.metal3.io`;
  const message = denied.name === undefined ? `${qualified} is forbidden: ${reason}` : `${qualified} "${denied.name}" is forbidden: ${reason}`;
  return { code: 403, reason: 'Forbidden', message };
}

export function notFound(resource: 'hostclaims' | 'hardwaredata', name: string): Outcome {
  return { code: 404, reason: 'NotFound', message: `${resource}.tenancy.metal3.io "${name}" not found` };
}

export const unauthorized: Outcome = { code: 401, reason: 'Unauthorized', message: 'Unauthorized' };

export function badRequest(message: string): Outcome {
  return { code: 400, reason: 'BadRequest', message };
}

/** kube's 422 for a HostClaim, with the field errors as the message lists them. */
export function invalid(name: string, ...errors: string[]): Outcome {
  const list = errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`;
  return { code: 422, reason: 'Invalid', message: `HostClaim.tenancy.metal3.io "${name}" is invalid: ${list}` };
}

export function conflict(name: string, detail: string): Outcome {
  return { code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled on hostclaims.tenancy.metal3.io "${name}": ${detail}` };
}

export const optimisticLock = 'the object has been modified; please apply your changes to the latest version and try again';

export const contentTypes = {
  json: 'application/json',
  merge: 'application/merge-patch+json',
  jsonPatch: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

export function claimBody(name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'tenancy.metal3.io/v1alpha1',
    kind: 'HostClaim',
    metadata: { name, ...metadata },
    spec: { poweredOn: false, hostSelector: { matchLabels: { role: 'none' } }, ...spec },
  });
}
