/**
 * The generic REST layer: every verb of every served resource, written once.
 * A resource contributes only its descriptor, its strategy (validation,
 * table columns) and its store (contracts.ts). This module routes a request
 * to its verb; each verb lives in its own module (read, create, update,
 * patch, delete, watch), sharing body decoding (decode.ts) and the response
 * representations (representation.ts).
 */
import type { Router } from 'express';
import { Router as createRouter } from 'express';
import { requestContext, requestUser } from '../request-context.js';
import type { ResourceRequestInfo } from '../request-info.js';
import { groupVersionString, type ApiGroupVersion, type Verb } from '../resource.js';
import { escapeFieldValue, parseFieldSelector } from '../field-selector.js';
import { badRequest, methodNotAllowed, methodNotSupported, notFound, type GroupResource } from '../status.js';
import type { Call, RestResource, WriteCall } from './contracts.js';
import { guardCommits } from './commit-guard.js';
import { createObject } from './create.js';
import { deleteCollection, deleteObject } from './delete.js';
import { patchObject } from './patch.js';
import { parseListParameters, type ListParameters } from './query.js';
import { SelectionPredicate, selectableFields } from './selection.js';
import { ScopedSelection, type NamespaceAccess, type ReadAccess } from './namespace-scope.js';
import { listScoped, restrictedNamespaces } from './scoped-list.js';
import { getObject, listObjects, listScope } from './read.js';
import { negotiateOutputMediaType, respondList } from './representation.js';
import { updateObject } from './update.js';
import { serveWatch } from './watch.js';

const readVerbs: readonly Verb[] = ['get', 'list', 'watch'];
/** The verbs kube's handlers exist for, on an object or collection and on a subresource. */
const objectVerbs: readonly string[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const subresourceVerbs: readonly string[] = ['get', 'update', 'patch'];

/** `readAccess`: who may read which namespaces, for lists and watches of all namespaces (namespace-scope.ts). */
export function restRouter(gv: ApiGroupVersion, resources: readonly RestResource[], readAccess: ReadAccess): Router {
  resources.forEach(checkAccess);
  const byPlural = new Map(resources.map((r) => [r.strategy.descriptor.plural, r]));
  const router = createRouter();
  router.use(async (req, res, next) => {
    const { info, url } = requestContext(req);
    // kube-apiserver hands a request to the aggregator (or to a CRD) only under the exact `/apis/` prefix.
    if (!info.isResourceRequest || !info.path.startsWith('/apis/') || info.apiGroup !== gv.group || info.apiVersion !== gv.version) {
      next();
      return;
    }
    const resource = byPlural.get(info.resource);
    // Like crdHandler, hand what it does not serve to the delegate: kube's final 404.
    if (resource === undefined || !inScope(info)) {
      next();
      return;
    }
    const gr = { group: gv.group, resource: info.resource };
    checkRoute(info, resource, gr);
    await dispatch({ req, res, info, url, resource, gv, gr }, readAccess);
  });
  return router;
}

/** A read-only resource must not advertise a write verb it could never serve (discovery honesty). */
function checkAccess(resource: RestResource): void {
  if (resource.access === 'read-write') return;
  const { descriptor } = resource.strategy;
  const verbs = [...descriptor.verbs, ...descriptor.subresources.flatMap((s) => s.verbs)];
  const writes = verbs.filter((verb) => !readVerbs.includes(verb));
  if (writes.length > 0) throw new Error(`${descriptor.plural} is read-only but declares ${writes.join(', ')}`);
}

/**
 * A namespaced resource without a namespace is only a list or watch across
 * namespaces; anything else is an unknown path (crdHandler's scope check).
 */
function inScope(info: ResourceRequestInfo): boolean {
  return info.namespace !== '' || info.verb === 'list' || info.verb === 'watch';
}

/**
 * crdHandler's routing: an unknown subresource is the named object's 404;
 * a verb the shape has no handler for is kube's MethodNotSupported; a verb
 * the shape has but this resource does not serve is the generic 405.
 */
function checkRoute(info: ResourceRequestInfo, resource: RestResource, gr: GroupResource): void {
  const { descriptor } = resource.strategy;
  const subresource = info.subresource === '' ? undefined : descriptor.subresources.find((s) => s.name === info.subresource);
  if (info.subresource !== '' && subresource === undefined) throw notFound(gr, info.name);
  if (!(subresource === undefined ? objectVerbs : subresourceVerbs).includes(info.verb)) throw methodNotSupported(gr, info.verb);
  if (!(subresource?.verbs ?? descriptor.verbs).includes(info.verb as Verb)) throw methodNotAllowed();
  // kube's update and patch handlers ask for the name first (a trailing `/` or `%2F` leaves none).
  if ((info.verb === 'update' || info.verb === 'patch') && info.name === '') throw badRequest('name must be provided');
}

async function dispatch(call: Call, readAccess: ReadAccess): Promise<void> {
  // PatchResource checks the patch type (415) before it negotiates (patch.ts).
  if (call.info.verb !== 'patch') negotiateOutputMediaType(call.req);
  switch (call.info.verb) {
    case 'get':
      return getObject(call);
    case 'list': {
      const namespaces = await restrictedNamespaces(call, readAccess);
      if (namespaces === undefined) return listObjects(call);
      const params = parseListParameters(call.url.searchParams);
      respondList(call.req, call.res, await listScoped(call, params, namespaces), call.resource.strategy);
      return;
    }
    case 'watch':
      return dispatchWatch(call, readAccess);
  }
  const { resource } = call;
  if (resource.access === 'read-only') throw methodNotAllowed();
  return dispatchWrite({ ...call, resource });
}

/**
 * A watch of all namespaces is narrowed to the namespaces its requester may
 * read, and follows their access for as long as it runs (also a requester
 * who could read everything when it started).
 */
async function dispatchWatch(call: Call, readAccess: ReadAccess): Promise<void> {
  const params = watchParameters(call);
  const apiVersion = groupVersionString(call.gv);
  if (call.info.namespace !== '') return serveWatch(call.req, call.res, call.resource, apiVersion, listScope(call, params), params);
  const user = requestUser(call.req);
  // Subscribed before the access is read, so that no change of RBAC falls between the two.
  const following: { selection?: ScopedSelection; changed?: NamespaceAccess } = {};
  const stop = readAccess.subscribe(user, 'watch', call.gr, (access) => {
    following.changed = access;
    following.selection?.update(access);
  });
  call.res.on('close', stop);
  const selection = new ScopedSelection(params.selection, await readAccess.namespaces(user, 'watch', call.gr));
  if (following.changed !== undefined) selection.update(following.changed);
  following.selection = selection;
  return serveWatch(call.req, call.res, call.resource, apiVersion, listScope(call, params), { ...params, selection }, selection);
}

/**
 * kube's ListResource: a name in the path (the deprecated `/watch/` prefix)
 * selects that object, and a field selector may only select the same name.
 */
function watchParameters(call: Call): ListParameters {
  const params = parseListParameters(call.url.searchParams);
  const pathName = call.info.parts[1] ?? '';
  if (pathName === '') return params;
  const { selection } = params;
  if (selection.field.isEverything()) {
    const byName = new SelectionPredicate(selection.label, parseFieldSelector(`metadata.name=${escapeFieldValue(pathName)}`, selectableFields));
    return { ...params, selection: byName };
  }
  if (selection.matchesSingle() !== pathName) throw badRequest("fieldSelector metadata.name doesn't match requested name");
  return params;
}

async function dispatchWrite(unguarded: WriteCall): Promise<void> {
  const call = guardCommits(unguarded);
  switch (call.info.verb) {
    case 'create':
      return createObject(call);
    case 'update':
      return updateObject(call);
    case 'patch':
      return patchObject(call);
    case 'delete':
      return deleteObject(call);
    case 'deletecollection':
      return deleteCollection(call);
    default:
      throw methodNotAllowed();
  }
}
