/**
 * The list side of identity-scoped reads (namespace-scope.ts): a list of
 * all namespaces by a requester who may read only some of them, answered
 * as the union of those namespaces' lists.
 */
import { requestUser } from '../request-context.js';
import { badRequest } from '../status.js';
import type { Call } from './contracts.js';
import type { ReadAccess } from './namespace-scope.js';
import type { ListParameters } from './query.js';
import { compareStorageKeys, revision, type ObjectList } from './types.js';

/** The requester's access for a list of all namespaces, or undefined when it is every namespace (nothing to narrow). */
export async function restrictedNamespaces(call: Call, readAccess: ReadAccess): Promise<ReadonlySet<string> | undefined> {
  if (call.info.namespace !== '') return undefined;
  const access = await readAccess.namespaces(requestUser(call.req), 'list', call.gr);
  return access === 'all' ? undefined : access;
}

/**
 * A list of all namespaces for a requester who may read `namespaces`: the
 * union of those namespaces' lists (read together when the store can, else
 * each as a namespaced list is), in kube's order. Not paged: a limit is ignored (as kube-apiserver's watch
 * cache ignores it) and a continue token, never issued here, is refused.
 * Its resourceVersion is the oldest of its parts, so a watch from it misses
 * nothing (it may repeat a change a part already reflects).
 */
export async function listScoped(call: Call, params: ListParameters, namespaces: ReadonlySet<string>): Promise<ObjectList> {
  if (params.continue !== undefined) throw badRequest('invalid continue token: continue key is not valid: it was issued for another list');
  const pinned = params.selection.matchesSingleNamespace();
  const targets = [...namespaces].filter((namespace) => pinned === undefined || namespace === pinned).sort();
  const query = {
    selection: params.selection,
    ...(params.resourceVersion === undefined ? {} : { resourceVersion: params.resourceVersion }),
    ...(params.resourceVersionMatch === undefined ? {} : { resourceVersionMatch: params.resourceVersionMatch }),
  };
  const { store } = call.resource;
  const together = targets.length === 0 ? undefined : await store.listNamespaces?.(targets, query);
  const parts =
    together === undefined
      ? await Promise.all(targets.map(async (namespace) => ({ namespaces: [namespace], list: await store.list(namespace, query) })))
      : [{ namespaces: targets, list: together }];
  const items = parts
    .flatMap(({ namespaces: readable, list }) => list.items.filter((object) => readable.includes(object.metadata.namespace ?? '') && params.selection.matches(object)))
    .sort(compareStorageKeys);
  const versions = parts.map(({ list }) => list.metadata.resourceVersion ?? '').filter((rv) => revision(rv) >= 0n);
  const oldest = versions.reduce<string | undefined>((min, rv) => (min === undefined || revision(rv) < revision(min) ? rv : min), undefined);
  const { apiVersion, kind } = listKind(call);
  return { apiVersion, kind, metadata: { resourceVersion: oldest ?? store.hub.currentResourceVersion() }, items };
}

function listKind(call: Call): { apiVersion: string; kind: string } {
  return { apiVersion: `${call.gv.group}/${call.gv.version}`, kind: `${call.resource.strategy.descriptor.kind}List` };
}
