/**
 * Stage 4: authenticate (front-proxy → client certificate → TokenReview →
 * anonymous), then drop the identity headers so no later stage can read an
 * identity that did not come from the authenticator.
 *
 * A connection's certificate is read once, on its first request:
 * renegotiation is refused (tls-context.ts), so the peer certificate cannot
 * change while the connection lives, and a resumed session arrives on a new
 * connection whose certificate is read and verified afresh. The certificate
 * is verified on every request; what that costs is memoized by the
 * certificate, across connections (auth/x509-chain.ts).
 */
import type { X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { RequestHandler } from 'express';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Credentials } from '../../auth/credentials.js';
import { peerCertificate } from '../../auth/x509-chain.js';
import { unauthorized } from '../../api/status.js';
import { unavailableNow } from '../../backing/errors.js';
import type { ApiServerMetrics } from '../../observability/metrics.js';
import { requestContext } from '../../api/request-context.js';

export function withAuthentication(authenticator: Pick<Authenticator, 'authenticate'>, metrics: ApiServerMetrics): RequestHandler {
  return async (req, _res, next) => {
    const credentials: Credentials = {
      peerCertificate: connectionCertificate(req.socket),
      headers: req.headersDistinct,
    };
    const decision = await authenticator.authenticate(credentials);
    if (decision.kind !== 'authenticated') {
      metrics.authenticationAttempts.inc({ result: 'error' });
      throw decision.kind === 'unavailable' ? unavailableNow('authentication') : unauthorized();
    }
    metrics.authenticationAttempts.inc({ result: 'success' });
    const context = requestContext(req);
    context.user = decision.user;
    context.authenticationMethod = decision.method;
    stripIdentityHeaders(req.headers);
    next();
  };
}

// A socket without a certificate maps to null, so it is not read again either.
const connectionCertificates = new WeakMap<TLSSocket, X509Certificate | null>();

function connectionCertificate(socket: Socket): X509Certificate | undefined {
  if (!(socket instanceof TLSSocket)) return undefined;
  let certificate = connectionCertificates.get(socket);
  if (certificate === undefined) {
    certificate = peerCertificate(socket.getPeerX509Certificate()) ?? null;
    connectionCertificates.set(socket, certificate);
  }
  return certificate ?? undefined;
}

function stripIdentityHeaders(headers: Record<string, unknown>): void {
  const credentialHeaders = Object.keys(headers).filter((name) => name === 'authorization' || name.startsWith('x-remote-'));
  for (const name of credentialHeaders) Reflect.deleteProperty(headers, name);
}
