/**
 * Stage 2: one structured log line and the apiserver_* metrics per request,
 * written when the response finishes (or the client goes away). Only
 * explicitly chosen fields are logged: never headers, tokens or bodies.
 */
import type { RequestHandler } from 'express';
import type { Logger } from '../../observability/logger.js';
import type { ApiServerMetrics, RequestLabels } from '../../observability/metrics.js';
import { requestContext, type RequestContext } from '../../api/request-context.js';

// Peer replicas ask /replicas/watermark around every consistent read: counted, not logged.
const quietPaths = new Set(['/healthz', '/livez', '/readyz', '/metrics', '/replicas/watermark']);
/** Health endpoints and their per-check paths (/readyz/<check>). */
const healthPath = /^\/(?:healthz|livez|readyz)(?:\/|$)/;
const longRunningVerbs = new Set(['watch']);

export function withRequestLog(logger: Logger, metrics: ApiServerMetrics): RequestHandler {
  return (req, res, next) => {
    const context = requestContext(req);
    const labels = metricLabels(context);
    const longRunning = longRunningVerbs.has(labels.verb.toLowerCase());
    if (longRunning) metrics.longRunning.inc(labels);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      if (longRunning) metrics.longRunning.dec(labels);
      const seconds = Number(process.hrtime.bigint() - context.startedAt) / 1e9;
      const code = res.headersSent ? res.statusCode : 0;
      metrics.requests.inc({ ...labels, code: String(code) });
      metrics.requestDuration.observe(labels, seconds);
      const size = Number(res.getHeader('Content-Length') ?? 0);
      if (labels.verb === 'GET' || labels.verb === 'LIST') metrics.responseSizes.observe(labels, size);
      if (quietPaths.has(context.url.pathname) && code < 400) return;
      logRequest(logger, context, req.method, code, seconds, req.headers['user-agent'], !res.writableFinished);
    };
    res.on('finish', finish);
    res.on('close', finish);
    next();
  };
}

function logRequest(
  logger: Logger,
  context: RequestContext,
  method: string,
  code: number,
  seconds: number,
  userAgent: string | undefined,
  aborted: boolean,
): void {
  const info = context.info;
  const fields = {
    auditID: context.auditId,
    user: context.user?.name,
    authn: context.authenticationMethod,
    method,
    path: context.url.pathname,
    verb: info.verb,
    ...(info.isResourceRequest
      ? { resource: info.resource, subresource: info.subresource || undefined, namespace: info.namespace || undefined, name: info.name || undefined }
      : {}),
    code,
    latencyMs: Math.round(seconds * 1000 * 100) / 100,
    userAgent,
    ...(aborted ? { aborted: true } : {}),
  };
  logger[requestLogLevel(context.url.pathname, code)](fields, 'request');
}

/**
 * A 5xx is the server's failure (error), except from a health endpoint:
 * there it is the answer "not ready", which the kubelet polls for while a
 * replica starts or kube-apiserver is away (warn, not one error per probe).
 */
export function requestLogLevel(path: string, code: number): 'info' | 'warn' | 'error' {
  if (code < 500) return 'info';
  return healthPath.test(path) ? 'warn' : 'error';
}

/** kube's metric labels: upper-case verb, LIST/WATCH distinguished, scope from the URL. */
function metricLabels(context: RequestContext): RequestLabels {
  const info = context.info;
  if (!info.isResourceRequest) {
    return { verb: info.verb.toUpperCase(), dry_run: '', group: '', version: '', resource: '', subresource: '', scope: '', component: 'apiserver' };
  }
  const scope = info.name !== '' ? 'resource' : info.namespace !== '' ? 'namespace' : 'cluster';
  const dryRun = context.url.searchParams.getAll('dryRun').join(',');
  return {
    verb: info.verb.toUpperCase(),
    dry_run: dryRun,
    group: info.apiGroup,
    version: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    scope,
    component: 'apiserver',
  };
}
