/**
 * Assembles the TLS server context from its two moving parts, the serving
 * certificate and the client CAs (front-proxy CA + cluster client CA from
 * kube-system/extension-apiserver-authentication), and swaps it in place
 * when either changes.
 *
 * The client CAs are offered in the CertificateRequest because Go clients
 * (kube-apiserver's proxy among them) only send a certificate issued by a
 * listed CA. Offering a CA decides nothing: the authentication stage
 * verifies every chain against the one pool that may vouch for it.
 *
 * Renegotiation is refused, as Go's crypto/tls server refuses it (a
 * no_renegotiation alert): a connection's peer certificate is then the one
 * of its handshake for as long as it lives, which the authentication stage
 * relies on to read it once per connection.
 */
import { constants } from 'node:crypto';
import type { Server } from 'node:https';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import type { AuthenticationConfig } from '../auth/authentication-config.js';
import type { CertificatePair } from './serving-certificate.js';

export function serverTlsOptions(pair: CertificatePair, auth: AuthenticationConfig | undefined): TlsOptions {
  return {
    ...secureContext(pair, auth),
    requestCert: true,
    // Callers without certificates (probes, bearer tokens) must still connect; we verify per request.
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
  };
}

function secureContext(pair: CertificatePair, auth: AuthenticationConfig | undefined): SecureContextOptions {
  const cas = [auth?.requestHeader?.caPem, auth?.clientCAPem].filter((pem): pem is string => pem !== undefined && pem !== '');
  return { cert: pair.certPem, key: pair.keyPem, secureOptions: constants.SSL_OP_NO_RENEGOTIATION, ...(cas.length > 0 ? { ca: cas } : {}) };
}

export class TlsContextSwitch {
  private server: Server | undefined;

  constructor(
    private pair: CertificatePair,
    private auth: AuthenticationConfig | undefined,
  ) {}

  options(): TlsOptions {
    return serverTlsOptions(this.pair, this.auth);
  }

  attach(server: Server): void {
    this.server = server;
  }

  updateServingCertificate(pair: CertificatePair): void {
    this.pair = pair;
    this.apply();
  }

  updateAuthentication(auth: AuthenticationConfig): void {
    this.auth = auth;
    this.apply();
  }

  private apply(): void {
    this.server?.setSecureContext(secureContext(this.pair, this.auth));
  }
}
