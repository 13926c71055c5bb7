/**
 * Stage 1: give the request its Audit-ID (the aggregator's, when it sent
 * one, so logs correlate across both servers), its parsed URL and its
 * RequestInfo (k8s.io/apiserver's WithRequestInfo). The URL is parsed here
 * once (api/request-url.ts); every later stage and handler reads the
 * context, never `req.url`.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { parseRequestInfo, type RequestInfo } from '../../api/request-info.js';
import { parseRequestUrl, type RequestUrl } from '../../api/request-url.js';
import { setRequestContext } from '../../api/request-context.js';

const auditIdHeader = 'audit-id';

export function withRequestInfo(): RequestHandler {
  return (req, res, next) => {
    const sent = req.headers[auditIdHeader];
    const auditId = typeof sent === 'string' && sent !== '' ? sent : randomUUID();
    res.setHeader('Audit-Id', auditId);
    const startedAt = process.hrtime.bigint();
    const target = req.url;
    let url: RequestUrl = { pathname: target, searchParams: new URLSearchParams() };
    let info: RequestInfo = { isResourceRequest: false, path: target, verb: req.method.toLowerCase() };
    try {
      url = parseRequestUrl(target);
      info = parseRequestInfo(req.method, url);
    } catch (error) {
      // Refused before authentication, as kube's Go server and WithRequestInfo refuse it.
      setRequestContext(req, { auditId, startedAt, url, info });
      next(error);
      return;
    }
    setRequestContext(req, { auditId, startedAt, url, info });
    next();
  };
}
