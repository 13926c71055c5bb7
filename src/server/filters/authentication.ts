/**
 * Stage 3: authenticate (front-proxy → client certificate → TokenReview →
 * anonymous), then drop the identity headers so no later stage can read an
 * identity that did not come from the authenticator.
 */
import type { Socket } from 'node:net';
import { TLSSocket, type DetailedPeerCertificate } from 'node:tls';
import type { RequestHandler } from 'express';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Credentials } from '../../auth/credentials.js';
import { presentedChain } from '../../auth/x509-chain.js';
import { unauthorized } from '../../api/status.js';
import type { ApiServerMetrics } from '../../observability/metrics.js';
import { requestContext } from '../context.js';

export function withAuthentication(authenticator: Pick<Authenticator, 'authenticate'>, metrics: ApiServerMetrics): RequestHandler {
  return async (req, _res, next) => {
    const credentials: Credentials = {
      peerChain: presentedChain(peerCertificate(req.socket)),
      headers: req.headersDistinct,
    };
    const decision = await authenticator.authenticate(credentials);
    if (decision.kind === 'unauthorized') {
      metrics.authenticationAttempts.inc({ result: 'error' });
      throw unauthorized();
    }
    metrics.authenticationAttempts.inc({ result: 'success' });
    const context = requestContext(req);
    context.user = decision.user;
    context.authenticationMethod = decision.method;
    stripIdentityHeaders(req.headers);
    next();
  };
}

function peerCertificate(socket: Socket): DetailedPeerCertificate | undefined {
  return socket instanceof TLSSocket ? socket.getPeerCertificate(true) : undefined;
}

function stripIdentityHeaders(headers: Record<string, unknown>): void {
  const credentialHeaders = Object.keys(headers).filter((name) => name === 'authorization' || name.startsWith('x-remote-'));
  for (const name of credentialHeaders) Reflect.deleteProperty(headers, name);
}
