import type { X509Certificate } from 'node:crypto';
import type { UserInfo } from '../api/user.js';

/** What a request presents to the authenticators, independent of the HTTP framework. */
export interface Credentials {
  /** Verified by nobody yet: the certificate the client presented, if any. */
  readonly peerCertificate: X509Certificate | undefined;
  /** Lower-cased header names with every value of every line (IncomingMessage.headersDistinct). */
  readonly headers: Readonly<Record<string, readonly string[] | undefined>>;
}

export type AuthenticationMethod = 'front-proxy' | 'x509' | 'token' | 'anonymous';

export type AuthenticationOutcome =
  | { readonly kind: 'authenticated'; readonly user: UserInfo; readonly method: AuthenticationMethod }
  | { readonly kind: 'none' }
  | { readonly kind: 'failed'; readonly error: string };
