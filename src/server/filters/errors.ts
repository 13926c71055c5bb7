/**
 * Last stages: unknown paths get kube's plain 404, and every thrown error
 * becomes a metav1.Status. Unexpected errors are logged with the Audit-ID
 * and their stack, and answered as a generic 500 so no internal text
 * reaches the client; a dependency's failure (503/504 with the cause
 * attached) is logged as a warning with the cause. A 5xx the server means
 * (a resourceVersion too large, kube's 504) needs no line beside the
 * request's own.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, badRequest, internalError } from '../../api/status.js';
import type { Logger } from '../../observability/logger.js';
import { writeStatus } from '../../api/respond.js';

/**
 * kube-apiserver's last handler (util/notfoundhandler) is Go's http.NotFound:
 * a plain-text 404, not a Status. Clients get the same answer from us for
 * every path kube-apiserver itself would not route.
 */
export function notFoundHandler(): RequestHandler {
  return (_req, res) => {
    res.statusCode = 404;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end('404 page not found\n');
  };
}

export function errorRenderer(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const apiError = toApiError(error);
    const line = failureLogLine(error, apiError);
    if (line !== undefined) logger[line.level]({ ...line.fields, auditID: res.getHeader('Audit-Id'), path: req.path }, line.message);
    // Answered already (the request's deadline passed): nothing more to say.
    if (res.writableEnded) return;
    if (res.headersSent) {
      // A streaming response already started: the only honest signal left is to cut it.
      res.destroy();
      return;
    }
    writeStatus(res, apiError);
  };
}

export interface FailureLogLine {
  readonly level: 'error' | 'warn';
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** What is logged of a request's error beside its request line (docs/operations.md, "Logs"). */
export function failureLogLine(error: unknown, apiError: ApiError): FailureLogLine | undefined {
  if (apiError.code < 500) return undefined;
  if (!(error instanceof ApiError) || error.code === 500) return { level: 'error', message: 'request failed', fields: { err: error } };
  if (error.cause === undefined) return undefined;
  const cause = error.cause instanceof Error ? error.cause.message : typeof error.cause === 'string' ? error.cause : 'unknown';
  return { level: 'warn', message: 'request failed: a dependency did not answer', fields: { code: error.code, cause } };
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // Body parser errors carry an HTTP status; anything else is our bug.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return badRequest((error as Error).message);
  return internalError('an unexpected error occurred; see the server log for the audit ID');
}
