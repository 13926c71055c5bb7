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
import { requestContext } from '../../server/context.js';
import type { ResourceRequestInfo } from '../request-info.js';
import { groupVersionString, type ApiGroupVersion, type ResourceDescriptor, type Verb } from '../resource.js';
import { methodNotAllowed, pathNotFound } from '../status.js';
import type { Call, RestResource, WriteCall } from './contracts.js';
import { createObject } from './create.js';
import { deleteCollection, deleteObject } from './delete.js';
import { patchObject } from './patch.js';
import { parseListParameters } from './query.js';
import { getObject, listObjects, listScope } from './read.js';
import { updateObject } from './update.js';
import { serveWatch } from './watch.js';

const readVerbs: readonly Verb[] = ['get', 'list', 'watch'];

export function restRouter(gv: ApiGroupVersion, resources: readonly RestResource[]): Router {
  resources.forEach(checkAccess);
  const byPlural = new Map(resources.map((r) => [r.strategy.descriptor.plural, r]));
  const router = createRouter();
  router.use(async (req, res, next) => {
    const { info, url } = requestContext(req);
    if (!info.isResourceRequest || info.apiGroup !== gv.group || info.apiVersion !== gv.version) {
      next();
      return;
    }
    const resource = byPlural.get(info.resource);
    if (resource === undefined || !routable(info, resource.strategy.descriptor)) throw pathNotFound();
    if (!servedVerbs(info, resource.strategy.descriptor).includes(info.verb)) throw methodNotAllowed();
    await dispatch({ req, res, info, url, resource, gv, gr: { group: gv.group, resource: info.resource } });
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

/** The shapes kube would route for a namespaced resource: collection, object, known subresource. */
function routable(info: ResourceRequestInfo, descriptor: ResourceDescriptor): boolean {
  if (info.parts.length > 2) return false;
  if (info.subresource !== '' && !descriptor.subresources.some((s) => s.name === info.subresource)) return false;
  // Cluster scope is only a collection (list/watch across namespaces); info.name may come from a metadata.name field selector.
  return info.namespace !== '' || (info.parts.length === 0 && (info.verb === 'list' || info.verb === 'watch'));
}

function servedVerbs(info: ResourceRequestInfo, descriptor: ResourceDescriptor): readonly string[] {
  if (info.subresource === '') return descriptor.verbs;
  return descriptor.subresources.find((s) => s.name === info.subresource)?.verbs ?? [];
}

async function dispatch(call: Call): Promise<void> {
  switch (call.info.verb) {
    case 'get':
      return getObject(call);
    case 'list':
      return listObjects(call);
    case 'watch': {
      const params = parseListParameters(call.url.searchParams);
      return serveWatch(call.req, call.res, call.resource, groupVersionString(call.gv), listScope(call, params), params);
    }
  }
  const { resource } = call;
  if (resource.access === 'read-only') throw methodNotAllowed();
  return dispatchWrite({ ...call, resource });
}

async function dispatchWrite(call: WriteCall): Promise<void> {
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
