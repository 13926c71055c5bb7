/**
 * get and list: a consistent read unless the client named a resourceVersion.
 * Selection as kube's generic store (registry/generic/registry.Store.List):
 * one SelectionPredicate per request, handed to the store and applied to
 * whatever it returns, on every resourceVersion path. What is returned
 * goes through the requester's projection (projection.ts).
 */
import { requestUser } from '../request-context.js';
import { RequesterProjection } from './projection.js';
import { respondList, respondObject } from './representation.js';
import { checkReadResourceVersion, parseListParameters, type ListParameters, type ListScope } from './query.js';
import type { Call } from './contracts.js';
import type { ApiObject, ObjectList } from './types.js';

export async function getObject(call: Call): Promise<void> {
  const rv = call.url.searchParams.get('resourceVersion') ?? '';
  if (rv !== '') checkReadResourceVersion(rv, 'get');
  const object = await call.resource.store.get(call.info.namespace, call.info.name, rv === '' ? undefined : rv);
  const [projected = object] = await requesterProjection(call).projectAll([object]);
  respondObject(call.req, call.res, 200, projected, call.resource.strategy);
}

/** The URL's namespace, or for a cluster-wide request the one a field selector pins (only narrows: the predicate still decides). */
export function listScope(call: Call, params: ListParameters = parseListParameters(call.url.searchParams)): ListScope {
  const urlNamespace = call.info.namespace === '' ? undefined : call.info.namespace;
  return { namespace: urlNamespace ?? params.selection.matchesSingleNamespace() };
}

/**
 * The objects of the scope that the request's selection matches, whichever
 * path the store took: the scope and the predicate are checked here on
 * every item, so no store can widen what a tenant sees.
 */
export async function listAll(call: Call, params: ListParameters): Promise<ObjectList> {
  const { namespace } = listScope(call, params);
  const list = await call.resource.store.list(namespace, {
    selection: params.selection,
    limit: params.limit,
    continue: params.continue,
    resourceVersion: params.resourceVersion,
    resourceVersionMatch: params.resourceVersionMatch,
  });
  const inScope = (object: ApiObject): boolean => namespace === undefined || object.metadata.namespace === namespace;
  return { ...list, items: list.items.filter((object) => inScope(object) && params.selection.matches(object)) };
}

export async function listObjects(call: Call): Promise<void> {
  const params = parseListParameters(call.url.searchParams);
  const list = await listAll(call, params);
  respondList(call.req, call.res, { ...list, items: await requesterProjection(call).projectAll(list.items) }, call.resource.strategy);
}

function requesterProjection(call: Call): RequesterProjection {
  return new RequesterProjection(call.resource.strategy.projection, requestUser(call.req));
}
