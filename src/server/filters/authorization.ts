/**
 * Stage 6: authorize the request once, with the attributes kube-apiserver
 * would use, and answer 403 in kube's words when denied.
 */
import type { RequestHandler } from 'express';
import { forbiddenMessage, type Attributes, type Authorizer } from '../../auth/authorizer.js';
import type { RequestInfo } from '../../api/request-info.js';
import { forbidden, forbiddenPath } from '../../api/status.js';
import type { ApiServerMetrics } from '../../observability/metrics.js';
import { requestContext, requestUser } from '../../api/request-context.js';

export function withAuthorization(authorizer: Pick<Authorizer, 'authorize'>, metrics: ApiServerMetrics): RequestHandler {
  return async (req, _res, next) => {
    const { info } = requestContext(req);
    const user = requestUser(req);
    const attributes = toAttributes(info);
    const decision = await authorizer.authorize(user, attributes);
    metrics.authorizationDecisions.inc({ decision: decision.allowed ? 'allowed' : 'denied' });
    if (decision.allowed) {
      next();
      return;
    }
    const message = forbiddenMessage(user.name, attributes) + (decision.reason === '' ? '' : `: ${decision.reason}`);
    if (info.isResourceRequest) throw forbidden({ group: info.apiGroup, resource: info.resource }, info.name, message);
    throw forbiddenPath(message);
  };
}

export function toAttributes(info: RequestInfo): Attributes {
  if (!info.isResourceRequest) return { kind: 'nonResource', verb: info.verb, path: info.path };
  return {
    kind: 'resource',
    verb: info.verb,
    group: info.apiGroup,
    version: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}
