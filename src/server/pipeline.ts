/**
 * The request path, read top to bottom (cf. k8s.io/apiserver's
 * DefaultBuildHandlerChain):
 *
 *   request info → request log/metrics → request deadline → authentication → max-in-flight →
 *   authorization → handlers (health, version, metrics, discovery, OpenAPI,
 *   resources) → 404 → error encoding (metav1.Status)
 *
 * Each stage is one module in ./filters; handlers never authenticate or
 * authorize themselves.
 */
import express, { type Express, type RequestHandler } from 'express';
import type { Authenticator } from '../auth/authenticator.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { Logger } from '../observability/logger.js';
import type { ApiServerMetrics } from '../observability/metrics.js';
import { withAuthentication } from './filters/authentication.js';
import { withAuthorization } from './filters/authorization.js';
import { errorRenderer, notFoundHandler } from './filters/errors.js';
import { withImpersonation } from './filters/impersonation.js';
import { withMaxInFlight, type InFlightLimits } from './filters/max-in-flight.js';
import { withRequestInfo } from './filters/request-info.js';
import { withRequestDeadline } from './filters/request-deadline.js';
import { withRequestLog } from './filters/request-log.js';
import { writeSerialized } from '../api/respond.js';
import { exactRoutes } from '../api/exact-routes.js';

export interface PipelineDependencies {
  readonly logger: Logger;
  readonly metrics: ApiServerMetrics;
  readonly authenticator: Pick<Authenticator, 'authenticate'>;
  readonly authorizer: Pick<Authorizer, 'authorize'>;
  readonly inFlightLimits: InFlightLimits;
  /** The deadline of every request but watches (`--request-timeout`). */
  readonly requestTimeoutMs: number;
  /** Routers mounted after authorization, in order. */
  readonly handlers: readonly RequestHandler[];
}

export function buildHandlerChain(deps: PipelineDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The URL is parsed once, by the request-info stage; express's own parse is never read.
  app.set('query parser', false);
  app.use(withRequestInfo());
  app.use(withRequestLog(deps.logger, deps.metrics));
  app.use(withRequestDeadline(deps.requestTimeoutMs));
  app.use(noCache());
  app.use(withAuthentication(deps.authenticator, deps.metrics));
  app.use(withImpersonation(deps.authorizer));
  app.use(withMaxInFlight(deps.inFlightLimits, deps.metrics));
  app.use(withAuthorization(deps.authorizer, deps.metrics));
  for (const handler of deps.handlers) app.use(handler);
  app.use(notFoundHandler());
  app.use(errorRenderer(deps.logger));
  return app;
}

/** kube's WithCacheControl: API responses are per-user and must not be cached by intermediaries. */
function noCache(): RequestHandler {
  return (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-cache, private');
    next();
  };
}

export function metricsRouter(metrics: ApiServerMetrics): RequestHandler {
  return exactRoutes([
    [
      '/metrics',
      async (_req, res) => {
        writeSerialized(res, 200, await metrics.registry.metrics(), metrics.registry.contentType);
      },
    ],
  ]);
}
