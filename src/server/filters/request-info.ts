/**
 * Stage 1: give the request its Audit-ID (the aggregator's, when it sent
 * one, so logs correlate across both servers) and its RequestInfo.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { parseRequestInfo } from '../../api/request-info.js';
import { setRequestContext } from '../context.js';

const auditIdHeader = 'audit-id';

export function withRequestInfo(): RequestHandler {
  return (req, res, next) => {
    const sent = req.headers[auditIdHeader];
    const auditId = typeof sent === 'string' && sent !== '' ? sent : randomUUID();
    res.setHeader('Audit-Id', auditId);
    // The Host header is client-controlled; only the path and query matter here.
    const url = new URL(req.originalUrl, 'https://localhost');
    setRequestContext(req, { auditId, startedAt: process.hrtime.bigint(), url, info: parseRequestInfo(req.method, url) });
    next();
  };
}
