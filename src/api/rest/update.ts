/** update (PUT): the client's object with its resourceVersion as the optimistic-concurrency precondition. */
import { badRequest } from '../status.js';
import type { WriteCall } from './contracts.js';
import { admitOrThrow, decodeBody, subresourceOf } from './decode.js';
import { parseWriteParameters } from './query.js';
import { respondObject, sendWarnings } from './representation.js';

export async function updateObject(call: WriteCall): Promise<void> {
  const write = parseWriteParameters(call.url.searchParams);
  const { object, warnings } = await decodeBody(call, write);
  const name = object.metadata.name ?? '';
  if (name !== call.info.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${call.info.name})`);
  }
  await admitOrThrow(call, object);
  const updated = await call.resource.store.update(call.info.namespace, object, subresourceOf(call), write);
  sendWarnings(call.res, [...warnings, ...updated.warnings]);
  respondObject(call.req, call.res, 200, updated.object, call.resource.strategy);
}
