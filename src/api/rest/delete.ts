/**
 * delete and deletecollection, in k8s.io/apiserver handlers/delete.go
 * order (output negotiation, DeleteOptions from the body or the query,
 * validation) before anything is written, with kube's preconditions and the
 * garbage collector's finalizers for Foreground/Orphan.
 */
import { writeJson } from '../respond.js';
import { ApiError, conflict, deleteUidMismatch, type GroupResource } from '../status.js';
import { parseJson, readBody } from './body.js';
import type { WriteCall } from './contracts.js';
import { parseDeleteParameters, parseListParameters, type DeleteParameters, type ListParameters } from './query.js';
import { listAll } from './read.js';
import { respondList, respondObject } from './representation.js';
import type { ApiObject, ObjectList } from './types.js';

export async function deleteObject(call: WriteCall): Promise<void> {
  const options = await deleteOptions(call);
  const result = await deleteOne(call, call.info.name, options);
  if (result.kind === 'pending') {
    respondObject(call.req, call.res, 200, result.object, call.resource.strategy);
    return;
  }
  // What kube-apiserver answers for a custom resource deleted at once (it does not return the object).
  writeJson(call.res, 200, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: result.name, group: call.gv.group, kind: call.info.resource, ...(result.uid === undefined ? {} : { uid: result.uid }) },
  });
}

/**
 * Foreground and Orphan deletion are the garbage collector's business: like
 * kube-apiserver, we only add its finalizer before deleting; the collector
 * (which watches this API) removes it when the dependents are handled.
 */
async function deleteOptions(call: WriteCall): Promise<DeleteParameters> {
  const text = await readBody(call.req);
  return parseDeleteParameters(call.url.searchParams, text === '' ? undefined : parseJson(text));
}

async function deleteOne(call: WriteCall, name: string, options: DeleteParameters) {
  const gcFinalizer =
    options.propagationPolicy === 'Foreground' ? 'foregroundDeletion' : options.propagationPolicy === 'Orphan' || options.orphanDependents === true ? 'orphan' : undefined;
  const store = call.resource.store;
  if (gcFinalizer !== undefined && options.dryRun === undefined) {
    const current = await store.get(call.info.namespace, name, undefined);
    checkPreconditions(call.gr, call.resource.strategy.descriptor.kind, name, current, options.preconditions);
    const finalizers = current.metadata.finalizers ?? [];
    if (current.metadata.deletionTimestamp === undefined && !finalizers.includes(gcFinalizer)) {
      current.metadata.finalizers = [...finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion'), gcFinalizer];
      const marked = await store.update(call.info.namespace, current, '', {});
      // The resourceVersion precondition held for the object this request marked: carry it to the marked revision.
      const preconditions = options.preconditions?.resourceVersion === undefined ? options.preconditions : { ...options.preconditions, resourceVersion: marked.object.metadata.resourceVersion };
      return store.delete(call.info.namespace, name, { ...options, preconditions });
    }
  }
  return store.delete(call.info.namespace, name, options);
}

function checkPreconditions(gr: GroupResource, kind: string, name: string, current: ApiObject, preconditions: { uid?: string; resourceVersion?: string } | undefined): void {
  if (preconditions?.uid !== undefined && preconditions.uid !== '' && preconditions.uid !== current.metadata.uid) {
    throw conflict({ group: gr.group, resource: kind }, name, deleteUidMismatch(preconditions.uid, current.metadata.uid ?? ''));
  }
  if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== current.metadata.resourceVersion) {
    // The generic store's BeforeDelete words it with the kind, not the resource.
    throw conflict(
      { group: gr.group, resource: kind },
      name,
      `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${current.metadata.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
}

/** registry.Store's deleteCollectionPageSize: the limit of each list when the request sets none. */
const deleteCollectionPageSize = '10000';

/**
 * registry.Store.DeleteCollection: the collection is listed in pages (so a
 * resourceVersion is an exact one, as on any list with a limit: 410 once
 * compacted), every page's objects deleted; a request that set a limit gets
 * one page, otherwise the pages follow without resourceVersion.
 */
export async function deleteCollection(call: WriteCall): Promise<void> {
  const requested = parseListParameters(call.url.searchParams);
  const options = await deleteOptions(call);
  let params: ListParameters = { ...requested, limit: requested.limit ?? deleteCollectionPageSize };
  let first: ObjectList | undefined;
  const deleted: ApiObject[] = [];
  for (;;) {
    const page = await listAll(call, params);
    first ??= page;
    for (const object of page.items) deleted.push(...(await deleteListed(call, object, options)));
    const next = page.metadata.continue ?? '';
    if (requested.limit !== undefined || next === '') break;
    params = { ...params, continue: next, resourceVersion: undefined, resourceVersionMatch: undefined };
  }
  respondList(call.req, call.res, { ...first, items: deleted }, call.resource.strategy);
}

/** One listed object deleted: what is answered for it (nothing when it is already gone, which is what the caller wanted). */
async function deleteListed(call: WriteCall, object: ApiObject, options: DeleteParameters): Promise<ApiObject[]> {
  try {
    const result = await deleteOne(call, object.metadata.name ?? '', options);
    return [result.kind === 'pending' ? result.object : object];
  } catch (error) {
    if (error instanceof ApiError && error.reason === 'NotFound') return [];
    throw error;
  }
}
