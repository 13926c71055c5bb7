/** get and list: a consistent read unless the client named a resourceVersion; selection as kube's generic store. */
import { respondList, respondObject } from './representation.js';
import { matchesFieldSelector, parseListParameters, type ListParameters, type ListScope } from './query.js';
import type { Call } from './contracts.js';
import type { ObjectList } from './types.js';

export async function getObject(call: Call): Promise<void> {
  const rv = call.url.searchParams.get('resourceVersion') ?? undefined;
  const object = await call.resource.store.get(call.info.namespace, call.info.name, rv === '' ? undefined : rv);
  respondObject(call.req, call.res, 200, object, call.resource.strategy);
}

export function listScope(call: Call, params: ListParameters = parseListParameters(call.url.searchParams)): ListScope {
  const urlNamespace = call.info.namespace === '' ? undefined : call.info.namespace;
  const selectedNamespace = params.fieldSelector.requiresExactMatch('metadata.namespace');
  const possible = urlNamespace === undefined || selectedNamespace === undefined || selectedNamespace === urlNamespace;
  return { namespace: urlNamespace ?? selectedNamespace, possible, name: params.fieldSelector.requiresExactMatch('metadata.name') };
}

export async function listAll(call: Call, params: ListParameters): Promise<ObjectList> {
  const scope = listScope(call, params);
  const list = await call.resource.store.list(scope.namespace, {
    labelSelector: params.labelSelectorText,
    name: scope.name,
    limit: params.limit,
    continue: params.continue,
    resourceVersion: params.resourceVersion,
    resourceVersionMatch: params.resourceVersionMatch,
  });
  const items = scope.possible ? list.items.filter((o) => matchesFieldSelector(params, o)) : [];
  return { ...list, items };
}

export async function listObjects(call: Call): Promise<void> {
  const params = parseListParameters(call.url.searchParams);
  respondList(call.req, call.res, await listAll(call, params), call.resource.strategy);
}
