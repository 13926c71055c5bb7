/**
 * Last stages: unknown paths get kube's 404 Status, and every thrown error
 * becomes a metav1.Status. Unexpected errors are logged with the Audit-ID
 * and answered as a generic 500 so no internal text reaches the client.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, badRequest, internalError, pathNotFound } from '../../api/status.js';
import type { Logger } from '../../observability/logger.js';
import { writeStatus } from '../respond.js';

export function notFoundHandler(): RequestHandler {
  return () => {
    throw pathNotFound();
  };
}

export function errorRenderer(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const apiError = toApiError(error);
    if (apiError.code >= 500) {
      logger.error({ err: error, auditID: res.getHeader('Audit-Id'), path: req.path }, 'request failed');
    }
    if (res.headersSent) {
      // A streaming response already started: the only honest signal left is to cut it.
      res.destroy();
      return;
    }
    writeStatus(res, apiError);
  };
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // Body parser errors carry an HTTP status; anything else is our bug.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return badRequest((error as Error).message);
  return internalError('an unexpected error occurred; see the server log for the audit ID');
}
