/**
 * GET/HEAD handlers matched exactly on the decoded request path, as kube's
 * PathRecorderMux matches (k8s.io/apiserver/pkg/server/mux): no case
 * folding, no trailing-slash leniency, no second parse of `req.url` (the
 * path is the one the request-info stage parsed).
 */
import type { Request, RequestHandler, Response } from 'express';
import { requestContext } from './request-context.js';

export type RouteHandler = (req: Request, res: Response) => void | Promise<void>;

export function exactRoutes(routes: Iterable<readonly [string, RouteHandler]>): RequestHandler {
  const byPath = new Map(routes);
  return async (req, res, next) => {
    const handler = req.method === 'GET' || req.method === 'HEAD' ? byPath.get(requestContext(req).url.pathname) : undefined;
    if (handler === undefined) {
      next();
      return;
    }
    await handler(req, res);
  };
}
