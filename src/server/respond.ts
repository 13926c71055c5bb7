/** Response encoding shared by every handler: JSON bodies and metav1.Status errors. */
import type { ServerResponse } from 'node:http';
import type { ApiError } from '../api/status.js';

export const jsonContentType = 'application/json';

export function writeJson(res: ServerResponse, code: number, body: unknown, contentType = jsonContentType): void {
  writeSerialized(res, code, JSON.stringify(body), contentType);
}

/** Writes an already serialized body with exactly the given Content-Type (express would rewrite it). */
export function writeSerialized(res: ServerResponse, code: number, payload: string | Buffer, contentType: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.end(payload);
}

export function writeStatus(res: ServerResponse, error: ApiError): void {
  const retryAfter = error.details?.retryAfterSeconds;
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  writeJson(res, error.code, error.toStatus());
}
