/**
 * Bearer tokens are checked by kube-apiserver through TokenReview (which
 * enforces audiences and bound-object revocation, unlike local JWT checks),
 * with answers cached for 10 s as DelegatingAuthenticationOptions does. A
 * review kube-apiserver cannot answer within 10 s (there:
 * TokenRequestTimeout) is a retriable 503/504, not a 401 (backing/errors.ts
 * `dependencyFailure`).
 */
import { createHash } from 'node:crypto';
import { dependencyFailure } from '../backing/errors.js';
import type { KubeClient } from '../backing/kube-client.js';
import type { AuthenticationOutcome, Credentials } from './credentials.js';
import type { UserInfo } from '../api/user.js';
import { ExpiringAnswers } from './expiring-answers.js';

interface TokenReviewStatus {
  readonly authenticated?: boolean;
  readonly user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  readonly error?: string;
}

type Review = { readonly user: UserInfo } | { readonly error: string };

const cacheTtlMs = 10_000;
const reviewTimeoutMs = 10_000;

export class TokenReviewAuthenticator {
  private readonly cache = new ExpiringAnswers<Review>({ max: 10_000, ttlMs: cacheTtlMs });

  constructor(private readonly client: KubeClient) {}

  async authenticate(credentials: Credentials): Promise<AuthenticationOutcome> {
    const token = bearerToken(credentials.headers.authorization?.[0]);
    if (token === undefined) return { kind: 'none' };
    // Key by digest so tokens are never held as cache keys in memory dumps.
    const key = createHash('sha256').update(token).digest('hex');
    const result = await this.cache.fetch(key, () => review(this.client, token)).catch((error: unknown) => {
      throw dependencyFailure(error, 'authentication') ?? error;
    });
    if ('error' in result) return { kind: 'failed', error: 'invalid bearer token' };
    return { kind: 'authenticated', method: 'token', user: result.user };
  }
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function review(client: KubeClient, token: string): Promise<Review> {
  const answer = await client.create<{ status?: TokenReviewStatus }>(
    '/apis/authentication.k8s.io/v1/tokenreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    { timeoutMs: reviewTimeoutMs, idempotent: true },
  );
  const status = answer.status ?? {};
  if (status.authenticated !== true || status.user?.username === undefined) {
    return { error: status.error ?? 'token not authenticated' };
  }
  return {
    user: {
      name: status.user.username,
      uid: status.user.uid ?? '',
      groups: status.user.groups ?? [],
      extra: status.user.extra ?? {},
    },
  };
}
