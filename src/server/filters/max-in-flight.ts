/**
 * Stage 5: bound concurrent requests like kube's max-in-flight filter
 * (separate budgets for reads and writes; watches are long-running and not
 * counted), answering 429 with Retry-After so clients back off and retry.
 */
import type { RequestHandler } from 'express';
import { tooManyRequests } from '../../api/status.js';
import type { ApiServerMetrics } from '../../observability/metrics.js';
import { requestContext } from '../../api/request-context.js';

export interface InFlightLimits {
  readonly readOnly: number;
  readonly mutating: number;
}

const readOnlyVerbs = new Set(['get', 'list', 'head', 'options']);

export function withMaxInFlight(limits: InFlightLimits, metrics: ApiServerMetrics): RequestHandler {
  const current = { readOnly: 0, mutating: 0 };
  return (req, res, next) => {
    const { info } = requestContext(req);
    if (info.verb === 'watch') {
      next();
      return;
    }
    const kind = readOnlyVerbs.has(info.verb) || req.method === 'GET' ? 'readOnly' : 'mutating';
    if (current[kind] >= limits[kind]) throw tooManyRequests(1);
    current[kind]++;
    metrics.inflight.set({ request_kind: kind }, current[kind]);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      current[kind]--;
      metrics.inflight.set({ request_kind: kind }, current[kind]);
    };
    res.on('finish', release);
    res.on('close', release);
    next();
  };
}
