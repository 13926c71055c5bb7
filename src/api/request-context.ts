/**
 * Per-request state built up by the pipeline stages. Kept in a WeakMap
 * rather than on express's untyped res.locals so every stage reads typed
 * values and nothing outlives the request.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestInfo } from './request-info.js';
import type { RequestUrl } from './request-url.js';
import type { UserInfo } from './user.js';

export interface RequestContext {
  readonly auditId: string;
  readonly startedAt: bigint;
  /** The request URL as parsed once by the request-info stage. */
  readonly url: RequestUrl;
  readonly info: RequestInfo;
  user?: UserInfo;
  authenticationMethod?: string;
}

const contexts = new WeakMap<IncomingMessage, RequestContext>();

export function setRequestContext(req: IncomingMessage, context: RequestContext): void {
  contexts.set(req, context);
}

export function requestContext(req: IncomingMessage): RequestContext {
  const context = contexts.get(req);
  if (context === undefined) throw new Error('request context missing: the request-info stage must run first');
  return context;
}

/** The authenticated user; only valid after the authentication stage. */
export function requestUser(req: IncomingMessage): UserInfo {
  const user = requestContext(req).user;
  if (user === undefined) throw new Error('request user missing: the authentication stage must run first');
  return user;
}
