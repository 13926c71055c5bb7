/**
 * The union of authenticators in k8s.io/apiserver's delegating order:
 * front-proxy → cluster client certificate → bearer token (TokenReview) →
 * anonymous. The first success wins; if none succeeds and one failed, the
 * request is unauthorized. Front-proxy identity headers sent by anyone but a
 * verified front proxy make the request unauthorized outright.
 */
import type { AuthenticationConfig } from './authentication-config.js';
import { authenticateClientCertificate } from './client-certificate.js';
import type { AuthenticationOutcome, Credentials } from './credentials.js';
import { authenticateFrontProxy, identityHeaderNames } from './front-proxy.js';
import type { TokenReviewAuthenticator } from './token-review.js';
import { anonymousUser, withAuthenticatedGroup } from '../api/user.js';

export type AuthenticationDecision =
  | { readonly kind: 'authenticated'; readonly user: AuthenticatedUser; readonly method: string }
  | { readonly kind: 'unauthorized'; readonly reason: string }
  /** The request's credentials cannot be judged yet (a retriable 503, never a 401 the client would take as final). */
  | { readonly kind: 'unavailable'; readonly reason: string };

type AuthenticatedUser = Extract<AuthenticationOutcome, { kind: 'authenticated' }>['user'];

export class Authenticator {
  constructor(
    private readonly config: () => AuthenticationConfig | undefined,
    private readonly tokens: Pick<TokenReviewAuthenticator, 'authenticate'>,
  ) {}

  async authenticate(credentials: Credentials): Promise<AuthenticationDecision> {
    const config = this.config();
    if (config === undefined) return this.beforeConfiguration(credentials);
    const frontProxy = authenticateFrontProxy(credentials, config.requestHeader);
    if (frontProxy.kind === 'authenticated') return authenticated(frontProxy);
    if (carriesIdentityHeaders(credentials, config)) {
      return { kind: 'unauthorized', reason: 'identity headers without a verified front-proxy certificate' };
    }
    const failures: string[] = frontProxy.kind === 'failed' ? [frontProxy.error] : [];
    const certificate = authenticateClientCertificate(credentials, config.clientCA);
    if (certificate.kind === 'authenticated') return authenticated(certificate);
    if (certificate.kind === 'failed') failures.push(certificate.error);
    return this.tokenOrAnonymous(credentials, failures);
  }

  /** The last steps of every path: a bearer token, else anonymous unless an earlier step failed (`failures`). */
  private async tokenOrAnonymous(credentials: Credentials, failures: readonly string[]): Promise<AuthenticationDecision> {
    const token = await this.tokens.authenticate(credentials);
    if (token.kind === 'authenticated') return authenticated(token);
    const reasons = token.kind === 'failed' ? [...failures, token.error] : failures;
    if (reasons.length > 0) return { kind: 'unauthorized', reason: reasons.join('; ') };
    return { kind: 'authenticated', user: anonymousUser, method: 'anonymous' };
  }

  /**
   * Before the ConfigMap's CAs are loaded (the first seconds of a replica):
   * a client certificate, the front proxy's or a user's, cannot be verified
   * yet, so its request is unavailable for a moment rather than
   * unauthorized (kube's delegated authentication loads the CAs before it
   * serves). A request without one (a kubelet probe, a bearer token) does
   * not depend on them.
   */
  private async beforeConfiguration(credentials: Credentials): Promise<AuthenticationDecision> {
    if (credentials.peerCertificate !== undefined) return { kind: 'unavailable', reason: 'authentication configuration not loaded yet' };
    return this.tokenOrAnonymous(credentials, []);
  }
}

function authenticated(outcome: Extract<AuthenticationOutcome, { kind: 'authenticated' }>): AuthenticationDecision {
  return { kind: 'authenticated', user: withAuthenticatedGroup(outcome.user), method: outcome.method };
}

function carriesIdentityHeaders(credentials: Credentials, config: AuthenticationConfig): boolean {
  const names = identityHeaderNames(config.requestHeader);
  return Object.keys(credentials.headers).some(
    (header) => names.exact.includes(header) || names.prefixes.some((prefix) => header.startsWith(prefix)),
  );
}
