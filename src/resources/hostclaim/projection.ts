/**
 * What an infrastructure admin sees of a HostClaim beyond the tenant form:
 * the bound host's own error text in the `Provisioned` condition, where a
 * tenant reads the sanitized message made from BMO's errorType
 * (controllers/binder/status.ts). The binder keeps the text on the record
 * (`hostErrorAnnotation`, BMC address and credentials already replaced);
 * the storage mapping keeps it beside the virtual object, never in it.
 */
import type { ResourceProjection } from '../../api/rest/projection.js';
import type { ApiObject } from '../../api/rest/types.js';
import type { UserInfo } from '../../api/user.js';
import { controllerAnnotationsOf } from '../../backing/storage-mapping.js';
import { hostErrorAnnotation } from './storage.js';

/** The condition and reason that carry a host error (status.ts provisionedCondition). */
const errorCondition = { type: 'Provisioned', reason: 'HostError' } as const;

interface ClaimCondition {
  readonly type?: unknown;
  readonly reason?: unknown;
  readonly message?: unknown;
}

interface ClaimStatus {
  readonly conditions?: readonly ClaimCondition[];
  readonly bareMetalHost?: { readonly namespace?: unknown };
}

export function hostClaimProjection(infrastructureAccess: (user: UserInfo, namespace: string) => Promise<boolean>): ResourceProjection {
  return {
    infrastructureNamespace: (claim) => (hostErrorOf(claim) === undefined ? undefined : hostNamespaceOf(claim)),
    forInfrastructureAdmin,
    infrastructureAccess,
  };
}

const adminForms = new WeakMap<ApiObject, ApiObject>();

/** The claim with the host's error text as the message of its host-error condition; computed once per object. */
function forInfrastructureAdmin(claim: ApiObject): ApiObject {
  const hostError = hostErrorOf(claim);
  if (hostError === undefined) return claim;
  let admin = adminForms.get(claim);
  if (admin === undefined) {
    const status = statusOf(claim);
    const conditions = (status.conditions ?? []).map((condition) => (isErrorCondition(condition) ? { ...condition, message: hostError } : condition));
    admin = { ...claim, status: { ...status, conditions } };
    adminForms.set(claim, admin);
  }
  return admin;
}

/** The message of the claim's host-error condition (what the `Host Error` column shows), if it has one. */
export function hostErrorMessage(claim: ApiObject): unknown {
  return (statusOf(claim).conditions ?? []).find(isErrorCondition)?.message;
}

/** The host's error text, when the claim shows a host error and the binder recorded its text. */
function hostErrorOf(claim: ApiObject): string | undefined {
  const text = controllerAnnotationsOf(claim)[hostErrorAnnotation];
  if (text === undefined || text === '') return undefined;
  return (statusOf(claim).conditions ?? []).some(isErrorCondition) ? text : undefined;
}

function hostNamespaceOf(claim: ApiObject): string | undefined {
  const namespace = statusOf(claim).bareMetalHost?.namespace;
  return typeof namespace === 'string' && namespace !== '' ? namespace : undefined;
}

function isErrorCondition(condition: ClaimCondition): boolean {
  return condition.type === errorCondition.type && condition.reason === errorCondition.reason;
}

function statusOf(claim: ApiObject): ClaimStatus {
  const status = claim['status'];
  return typeof status === 'object' && status !== null ? status : {};
}
