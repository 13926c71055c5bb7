/**
 * Delegated authorization: one SubjectAccessReview per request (never per
 * object), answers cached 10 s for allow and deny like
 * DelegatingAuthorizationOptions; system:masters and the health paths are
 * always allowed without asking.
 *
 * A request naming an object is first decided for every object of its
 * kind in its namespace (the review's empty name, which the
 * SubjectAccessReview API defines as "all"): an allow there covers every
 * name, so a client reading many objects of a namespace, as a controller
 * does, costs one review per 10 s rather than one per object. Only when
 * that is denied (a Role limited by resourceNames) is the name asked about;
 * both denials are cached. A review kube-apiserver cannot answer
 * (within DelegatingAuthorizationOptions' 10 s client timeout) is a
 * retriable 503/504, not a denial (backing/errors.ts `dependencyFailure`).
 * So is a denial while kube-apiserver is not ready (`denialsTrusted`): a
 * restarted kube-apiserver answers reviews before its RBAC informers have
 * synced, denying what a RoleBinding not yet loaded allows. Such a denial
 * is neither shown nor cached; an allow is (RBAC only adds).
 */
import { dependencyFailure, unavailableNow } from '../backing/errors.js';
import type { KubeClient } from '../backing/kube-client.js';
import type { UserInfo } from '../api/user.js';
import { ExpiringAnswers } from './expiring-answers.js';

export type Attributes =
  | {
      readonly kind: 'resource';
      readonly verb: string;
      readonly group: string;
      readonly version: string;
      readonly resource: string;
      readonly subresource: string;
      readonly namespace: string;
      readonly name: string;
    }
  | { readonly kind: 'nonResource'; readonly verb: string; readonly path: string };

export interface Decision {
  readonly allowed: boolean;
  /** The authorizer's explanation; kube appends it to the Forbidden message when non-empty. */
  readonly reason: string;
}

const alwaysAllowPaths = new Set(['/healthz', '/readyz', '/livez']);
const alwaysAllowGroup = 'system:masters';
const cacheTtlMs = 10_000;
/** DelegatingAuthorizationOptions.ClientTimeout. */
export const reviewTimeoutMs = 10_000;

interface SubjectAccessReviewStatus {
  readonly allowed?: boolean;
  readonly denied?: boolean;
  readonly reason?: string;
  readonly evaluationError?: string;
}

export type AccessReview = (user: UserInfo, attributes: Attributes) => Promise<Decision>;

export class Authorizer {
  private readonly cache = new ExpiringAnswers<Decision>({ max: 10_000, ttlMs: cacheTtlMs });

  /** `denialsTrusted`: whether kube-apiserver is ready, so that a denial means the requester lacks the permission. */
  constructor(
    private readonly review: AccessReview,
    private readonly denialsTrusted: () => boolean = () => true,
  ) {}

  /** Asks kube-apiserver with a SubjectAccessReview. */
  static delegating(client: KubeClient, denialsTrusted: () => boolean): Authorizer {
    return new Authorizer((user, attributes) => subjectAccessReview(client, user, attributes), denialsTrusted);
  }

  async authorize(user: UserInfo, attributes: Attributes): Promise<Decision> {
    if (user.groups.includes(alwaysAllowGroup)) return { allowed: true, reason: '' };
    if (attributes.kind === 'nonResource' && alwaysAllowPaths.has(attributes.path)) return { allowed: true, reason: '' };
    if (attributes.kind === 'resource' && attributes.name !== '') {
      const everyName = await this.decide(user, { ...attributes, name: '' });
      if (everyName?.allowed === true) return everyName;
    }
    const decision = await this.decide(user, attributes);
    if (decision === undefined) throw unavailableNow('authorization');
    return decision;
  }

  /** The (cached) review's decision; undefined for a denial that may only mean kube-apiserver is not ready yet (not cached). */
  private async decide(user: UserInfo, attributes: Attributes): Promise<Decision | undefined> {
    const key = cacheKey(user, attributes);
    let decision: Decision;
    try {
      decision = await this.cache.fetch(key, () => this.review(user, attributes));
    } catch (error) {
      // Not cached: the next request asks again.
      throw dependencyFailure(error, 'authorization') ?? error;
    }
    if (decision.allowed || this.denialsTrusted()) return decision;
    // Retriable, as when kube-apiserver does not answer.
    this.cache.delete(key);
    return undefined;
  }
}

function cacheKey(user: UserInfo, attributes: Attributes): string {
  const extra = Object.keys(user.extra)
    .sort()
    .map((key) => [key, [...(user.extra[key] ?? [])].sort()]);
  return JSON.stringify([user.name, user.uid, [...user.groups].sort(), extra, attributes]);
}

async function subjectAccessReview(client: KubeClient, user: UserInfo, attributes: Attributes): Promise<Decision> {
  const answer = await client.create<{ status?: SubjectAccessReviewStatus }>(
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.name,
        uid: user.uid,
        groups: user.groups,
        extra: user.extra,
        ...(attributes.kind === 'resource'
          ? {
              resourceAttributes: {
                verb: attributes.verb,
                group: attributes.group,
                version: attributes.version,
                resource: attributes.resource,
                subresource: attributes.subresource,
                namespace: attributes.namespace,
                name: attributes.name,
              },
            }
          : { nonResourceAttributes: { verb: attributes.verb, path: attributes.path } }),
      },
    },
    { timeoutMs: reviewTimeoutMs, idempotent: true },
  );
  const status = answer.status ?? {};
  return { allowed: status.allowed === true && status.denied !== true, reason: status.reason ?? '' };
}

/** k8s.io/apiserver responsewriters.forbiddenMessage. */
export function forbiddenMessage(user: string, attributes: Attributes): string {
  if (attributes.kind === 'nonResource') return `User "${user}" cannot ${attributes.verb} path "${attributes.path}"`;
  const resource = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  const where = attributes.namespace === '' ? 'at the cluster scope' : `in the namespace "${attributes.namespace}"`;
  return `User "${user}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.group}" ${where}`;
}
