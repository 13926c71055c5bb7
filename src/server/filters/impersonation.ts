/**
 * Impersonation headers, between authentication and max-in-flight, where
 * kube-apiserver's WithImpersonation sits. Through the aggregator
 * kube has already resolved impersonation and removed the headers; a request
 * sent here directly with them gets kube's answer where it can be known
 * without impersonating: with ConstrainedImpersonation (beta, on in 1.36),
 * a requester not allowed `impersonate-on:<mode>:<verb>` on the request's
 * resource is kube's 403 in its words, and headers without a user name are
 * kube's 400 (k8s.io/apiserver filters/impersonation
 * constrained_impersonation.go, mode.go). This server does not impersonate:
 * a requester kube would let impersonate gets a 400 that says so (kube
 * would serve the request as the impersonated user).
 */
import type { RequestHandler } from 'express';
import { forbiddenMessage, type Authorizer } from '../../auth/authorizer.js';
import { goQuote } from '../../api/go-strings.js';
import { badRequest, forbidden, forbiddenPath } from '../../api/status.js';
import { requestContext, requestUser } from '../../api/request-context.js';
import { toAttributes } from './authorization.js';

export function withImpersonation(authorizer: Pick<Authorizer, 'authorize'>): RequestHandler {
  return async (req, _res, next) => {
    const wanted = req.headersDistinct['impersonate-user']?.[0] ?? '';
    // processImpersonationHeaders: empty user and uid headers alone ask for nothing.
    const others = (req.headersDistinct['impersonate-uid']?.[0] ?? '') !== '' || Object.keys(req.headers).some((name) => name === 'impersonate-group' || name.startsWith('impersonate-extra-'));
    if (wanted === '' && !others) {
      next();
      return;
    }
    if (wanted === '') throw badRequest(`requested ${requestedUser(req.headersDistinct)} without impersonating a user name`);
    const { info } = requestContext(req);
    const user = requestUser(req);
    const request = toAttributes(info);
    const attributes = { ...request, verb: `impersonate-on:${modeOf(wanted)}:${request.verb}` };
    const decision = await authorizer.authorize(user, attributes);
    if (!decision.allowed) {
      const message = forbiddenMessage(user.name, attributes) + (decision.reason === '' ? '' : `: ${decision.reason}`);
      if (info.isResourceRequest) throw forbidden({ group: info.apiGroup, resource: info.resource }, info.name, message);
      throw forbiddenPath(message);
    }
    throw badRequest('impersonation is not supported by this server; send impersonated requests through kube-apiserver');
  };
}

/**
 * Go's `%#v` of the user.DefaultInfo the headers ask for, as kube's
 * processImpersonationHeaders words it (strings as %q, maps with sorted keys).
 */
function requestedUser(headers: NodeJS.Dict<string[]>): string {
  const quote = goQuote;
  const strings = (values: readonly string[]): string => `[]string{${values.map(quote).join(', ')}}`;
  const groups = headers['impersonate-group'];
  const extra = Object.keys(headers)
    .filter((name) => name.startsWith(extraPrefix))
    .map((name) => [unescapeExtraKey(name.slice(extraPrefix.length)), headers[name] ?? []] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const extraText = extra.length === 0 ? 'map[string][]string(nil)' : `map[string][]string{${extra.map(([key, values]) => `${quote(key)}:${strings(values)}`).join(', ')}}`;
  const uid = headers['impersonate-uid']?.[0] ?? '';
  return `&user.DefaultInfo{Name:"", UID:${quote(uid)}, Groups:${groups === undefined ? '[]string(nil)' : strings(groups)}, Extra:${extraText}}`;
}

const extraPrefix = 'impersonate-extra-';

/** Extra keys are percent-encoded in header names (url.PathUnescape); an invalid escape stays as sent. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** The constrained-impersonation mode a user name falls in. */
function modeOf(user: string): string {
  if (user.startsWith('system:serviceaccount:')) return 'serviceaccount';
  if (user.startsWith('system:node:')) return 'arbitrary-node';
  return 'user-info';
}
