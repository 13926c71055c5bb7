/**
 * update (PUT), in k8s.io/apiserver handlers/update.go and the generic
 * store's order: output negotiation, options, body, then against the stored
 * object the uid and resourceVersion preconditions (409), ObjectMeta update
 * validation (422) and admission, then the one write.
 */
import { conflict, badRequest, optimisticLockMessage } from '../status.js';
import type { WriteCall } from './contracts.js';
import { admitUpdate, decodeBody, subresourceOf } from './decode.js';
import { parseWriteParameters } from './query.js';
import { negotiateWriteOutput, respondObject, sendWarnings } from './representation.js';
import type { ApiObject } from './types.js';

export async function updateObject(call: WriteCall): Promise<void> {
  negotiateWriteOutput(call.req, 'object');
  const write = parseWriteParameters(call.url.searchParams, 'UpdateOptions');
  const { object, warnings } = await decodeBody(call, write);
  const name = object.metadata.name ?? '';
  if (name !== call.info.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${call.info.name})`);
  }
  const current = await call.resource.store.get(call.info.namespace, name, undefined);
  checkUpdatePreconditions(call, object, current);
  await admitUpdate(call, object, current);
  const updated = await call.resource.store.update(call.info.namespace, object, subresourceOf(call), write);
  sendWarnings(call.res, [...warnings, ...updated.warnings]);
  respondObject(call.req, call.res, 200, updated.object, call.resource.strategy);
}

/** A PUT's uid is a precondition (rest.DefaultUpdatedObjectInfo), checked before its resourceVersion. */
function checkUpdatePreconditions(call: WriteCall, object: ApiObject, current: ApiObject): void {
  const { uid, resourceVersion } = object.metadata;
  if (uid !== undefined && uid !== '' && uid !== current.metadata.uid) {
    throw conflict(call.gr, call.info.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
  }
  if (resourceVersion !== undefined && resourceVersion !== '' && resourceVersion !== current.metadata.resourceVersion) {
    throw conflict(call.gr, call.info.name, optimisticLockMessage);
  }
}
