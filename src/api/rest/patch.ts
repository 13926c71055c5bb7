/**
 * patch: JSON merge patch and JSON patch applied to fresh state and retried
 * on a conflict when the patch pins no resourceVersion (as kube's
 * patcher does); server-side apply is delegated to the backing store.
 */
import jsonPatch from 'fast-json-patch';
import { ApiError, badRequest, unsupportedMediaType } from '../status.js';
import { checkJsonPatchSize, decodeObject, mediaType, parseJson, patchTypes, readBody } from './body.js';
import type { WriteCall } from './contracts.js';
import { admitOrThrow, checkTypeMeta, subresourceOf, withMetadata } from './decode.js';
import { parseWriteParameters } from './query.js';
import { respondObject, sendWarnings } from './representation.js';
import type { ApiObject } from './types.js';

const maxPatchAttempts = 5;

export async function patchObject(call: WriteCall): Promise<void> {
  const type = mediaType(call.req);
  const write = parseWriteParameters(call.url.searchParams);
  const text = await readBody(call.req);
  if (type === patchTypes.apply) {
    await applyObject(call, text, write);
    return;
  }
  if (type !== patchTypes.merge && type !== patchTypes.json) {
    throw unsupportedMediaType([patchTypes.json, patchTypes.merge, patchTypes.apply]);
  }
  const patch = parseJson(text);
  if (type === patchTypes.json) checkJsonPatchSize(patch);
  for (let attempt = 1; ; attempt++) {
    const current = await call.resource.store.get(call.info.namespace, call.info.name, undefined);
    const patched = applyPatch(type, current, patch);
    const precondition = patched.metadata.resourceVersion;
    // A resourceVersion inside the patch is a precondition, never overwritten by a retry.
    const pinned = precondition !== current.metadata.resourceVersion;
    patched.metadata.name = call.info.name;
    checkTypeMeta(call, patched);
    await admitOrThrow(call, patched);
    try {
      const updated = await call.resource.store.update(call.info.namespace, patched, subresourceOf(call), write);
      sendWarnings(call.res, updated.warnings);
      respondObject(call.req, call.res, 200, updated.object, call.resource.strategy);
      return;
    } catch (error) {
      const isConflict = error instanceof ApiError && error.reason === 'Conflict';
      if (!isConflict || pinned || attempt >= maxPatchAttempts) throw error;
    }
  }
}

function applyPatch(type: string, current: ApiObject, patch: unknown): ApiObject {
  if (type === patchTypes.merge) {
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) throw badRequest('merge patch must be a JSON object');
    return mergePatch(current, patch) as ApiObject;
  }
  if (!Array.isArray(patch)) throw badRequest('json patch must be a JSON array of operations');
  try {
    return jsonPatch.applyPatch(structuredClone(current), patch as jsonPatch.Operation[], true, false).newDocument;
  } catch (error) {
    throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${(error as Error).message.split('\n')[0] ?? ''}`);
  }
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) Reflect.deleteProperty(result, key);
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

async function applyObject(call: WriteCall, text: string, write: ReturnType<typeof parseWriteParameters>): Promise<void> {
  if (write.fieldManager === undefined) throw badRequest('PATCH /apply requires fieldManager');
  const decoded = await decodeObject(text, patchTypes.apply);
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) throw badRequest('the apply configuration must be an object');
  const configuration = withMetadata(decoded as Record<string, unknown>);
  checkTypeMeta(call, configuration);
  const name = configuration.metadata.name;
  if (name !== undefined && name !== call.info.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${call.info.name})`);
  }
  configuration.metadata.name = call.info.name;
  await admitOrThrow(call, configuration);
  const applied = await call.resource.store.apply(call.info.namespace, call.info.name, configuration, subresourceOf(call), write);
  sendWarnings(call.res, applied.warnings);
  respondObject(call.req, call.res, 200, applied.object, call.resource.strategy);
}
