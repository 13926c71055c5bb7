/**
 * Stage 3: the request-wide deadline of every request but watches, as
 * kube's WithRequestDeadline and WithTimeoutForNonLongRunningRequests
 * (k8s.io/apiserver pkg/endpoints/filters/request_deadline.go,
 * pkg/server/filters/timeout.go). The deadline counts from the request's
 * arrival: the server's `--request-timeout`, or the `timeout` URL parameter
 * (a Go duration) when it is positive and shorter; a malformed one is 400.
 * A request unanswered at its deadline gets 504 Timeout and what its
 * handler writes later is dropped (kube's timeoutWriter answers such writes
 * with ErrHandlerTimeout); one whose answer has started is cut, as kube
 * cuts it. The handler's calls to kube-apiserver are
 * not cancelled: each has its own bound (docs/reliability.md, Timeouts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { GoDurationError, parseGoDuration } from '../../api/go-duration.js';
import { ApiError, badRequest } from '../../api/status.js';
import { requestContext } from '../../api/request-context.js';
import { writeStatus } from '../../api/respond.js';

export function withRequestDeadline(maximumMs: number): RequestHandler {
  return (req, res, next) => {
    const { info, url, startedAt } = requestContext(req);
    if (info.verb === 'watch') {
      next();
      return;
    }
    const allowedMs = requestedTimeoutMs(url.searchParams.get('timeout'), maximumMs);
    const elapsedMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
    const timer = setTimeout(() => {
      expire(req, res);
    }, Math.max(0, allowedMs - elapsedMs));
    const clear = (): void => {
      clearTimeout(timer);
    };
    res.on('finish', clear);
    res.on('close', clear);
    next();
  };
}

/** The request's allowance: the maximum, unless `timeout` asks for less. */
function requestedTimeoutMs(parameter: string | null, maximumMs: number): number {
  if (parameter === null || parameter === '') return maximumMs;
  let nanoseconds: bigint;
  try {
    nanoseconds = parseGoDuration(parameter);
  } catch (error) {
    if (error instanceof GoDurationError) throw badRequest(`invalid timeout specified in the request URL - ${error.message}`);
    throw error;
  }
  const requestedMs = Number(nanoseconds) / 1e6;
  return nanoseconds > 0n && requestedMs < maximumMs ? requestedMs : maximumMs;
}

function expire(req: IncomingMessage, res: ServerResponse): void {
  if (res.writableEnded) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A body still arriving (a slow client) is not read on: the connection closes after the answer.
  if (!req.complete) res.setHeader('Connection', 'close');
  // kube's apierrors.NewTimeoutError(…, 0): empty details.
  writeStatus(res, new ApiError(504, 'Timeout', 'Timeout: request did not complete within the allotted timeout', {}));
  muteLaterWrites(res);
}

/** The handler is still running and will answer: its headers and bytes go nowhere. */
function muteLaterWrites(res: ServerResponse): void {
  const ignore = (): ServerResponse => res;
  Object.assign(res, { setHeader: ignore, appendHeader: ignore, removeHeader: ignore, writeHead: ignore, write: () => true, end: ignore });
}
