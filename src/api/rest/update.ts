/**
 * update (PUT), in k8s.io/apiserver handlers/update.go and the generic
 * store's order: output negotiation, options, body, then against the stored
 * object the uid and resourceVersion preconditions (409), ObjectMeta update
 * validation (422) and admission, then the one write.
 */
import { invalid, invalidValue } from '../field-errors.js';
import { ApiError, conflict, optimisticLockMessage } from '../status.js';
import { checkObjectMediaType } from './body.js';
import type { WriteCall } from './contracts.js';
import { admitUpdate, checkObjectName, decodeBody, subresourceOf } from './decode.js';
import { parseWriteParameters } from './query.js';
import { respondObject, sendWarnings } from './representation.js';
import type { ApiObject } from './types.js';

export async function updateObject(call: WriteCall): Promise<void> {
  checkObjectMediaType(call.req);
  const write = parseWriteParameters(call.url.searchParams, 'UpdateOptions');
  const { object, warnings } = await decodeBody(call, write);
  checkObjectName(call, object.metadata.name ?? '');
  const current = await call.resource.store.get(call.info.namespace, call.info.name, undefined);
  checkUpdatePreconditions(call, object, current);
  await admitUpdate(call, object, current);
  const updated = await call.resource.store.update(call.info.namespace, object, subresourceOf(call), write);
  sendWarnings(call.res, [...warnings, ...updated.warnings]);
  respondObject(call.req, call.res, 200, updated.object, call.resource.strategy);
}

/**
 * The generic store's order: a PUT's uid is a precondition
 * (rest.DefaultUpdatedObjectInfo, reported as etcd3's StorageError under the
 * object's virtual key), then a resourceVersion is required (custom
 * resources allow no unconditional update) and must be current.
 */
function checkUpdatePreconditions(call: WriteCall, object: ApiObject, current: ApiObject): void {
  const { uid, resourceVersion } = object.metadata;
  if (uid !== undefined && uid !== '' && uid !== current.metadata.uid) {
    const key = `/registry/${call.gr.group}/${call.gr.resource}/${call.info.namespace}/${call.info.name}`;
    throw conflict(
      call.gr,
      call.info.name,
      `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
    );
  }
  if (resourceVersion === undefined || resourceVersion === '') throw resourceVersionRequired(call);
  if (resourceVersion !== current.metadata.resourceVersion) {
    throw conflict(call.gr, call.info.name, optimisticLockMessage);
  }
}

/** The generic store's refusal of an update without a resourceVersion (custom resources allow no unconditional update). */
export function resourceVersionRequired(call: WriteCall): ApiError {
  // NewInvalid with the resource as kind, as the generic store words it.
  return invalid(call.gr.group, call.gr.resource, call.info.name, [invalidValue('metadata.resourceVersion', 0, 'must be specified for an update')]);
}
