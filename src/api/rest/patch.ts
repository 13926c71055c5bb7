/**
 * patch, in k8s.io/apiserver handlers/patch.go order: output negotiation,
 * body, PatchOptions, then the patch applied to fresh state. Merge and JSON
 * patches are decoded and validated like an update (a patched object that
 * no longer decodes is kube's 422 on `patch`) and retried on a conflict when
 * the patch pins no resourceVersion; server-side apply is validated here and
 * delegated to the backing store's field manager.
 */
import jsonPatch from 'fast-json-patch';
import { invalid, invalidValue } from '../field-errors.js';
import { decodeObjectMeta, MetaDecodeError } from '../object-meta.js';
import { ApiError, badRequest, conflict, optimisticLockMessage, unsupportedMediaType } from '../status.js';
import { checkJsonPatchSize, decodeObject, parseJson, patchTypes, readBody } from './body.js';
import type { WriteCall } from './contracts.js';
import { admitCreate, admitUpdate, checkTypeMeta, subresourceOf, withTypedMetadata } from './decode.js';
import { parseWriteParameters, type WriteParameters } from './query.js';
import { negotiateWriteOutput, respondObject, sendWarnings } from './representation.js';
import type { ApiObject } from './types.js';

const maxPatchAttempts = 5;

export async function patchObject(call: WriteCall): Promise<void> {
  const type = patchType(call.req.headers['content-type'] ?? '');
  if (type !== patchTypes.merge && type !== patchTypes.json && type !== patchTypes.apply) {
    throw unsupportedMediaType([patchTypes.json, patchTypes.merge, patchTypes.apply]);
  }
  negotiateWriteOutput(call.req);
  const text = await readBody(call.req);
  const write = parseWriteParameters(call.url.searchParams, { patchType: type });
  if (type === patchTypes.apply) {
    await applyObject(call, text, write);
    return;
  }
  const patch = parseJson(text);
  // kube decodes the operations first, then counts them (handlers/patch.go).
  if (type === patchTypes.json) {
    checkJsonPatch(patch, write);
    checkJsonPatchSize(patch);
  } else checkMergePatch(patch, write);
  for (let attempt = 1; ; attempt++) {
    const current = await call.resource.store.get(call.info.namespace, call.info.name, undefined);
    const patched = patchedObject(call, type, current, patch);
    const precondition = patched.metadata.resourceVersion;
    // A resourceVersion inside the patch is a precondition, never overwritten by a retry.
    const pinned = precondition !== current.metadata.resourceVersion;
    if (pinned && precondition !== undefined && precondition !== '') throw conflict(call.gr, call.info.name, optimisticLockMessage);
    await admitUpdate(call, patched, current);
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

/** patch.go reads the patch type as the header up to its first `;`, as sent: no case folding, no parameter checks. */
function patchType(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return semicolon > 0 ? contentType.slice(0, semicolon) : contentType;
}

/** The patch applied to the current object, decoded back as kube decodes the result (422 on `patch` when it cannot be). */
function patchedObject(call: WriteCall, type: string, current: ApiObject, patch: unknown): ApiObject {
  const result = applyPatch(type, current, patch);
  // kube quotes the patched object as encoding/json writes a map: keys sorted.
  const undecodable = (message: string): ApiError => invalid('', '', '', [invalidValue('patch', JSON.stringify(sortKeys(result)), message)]);
  // A JSON patch that replaced or removed the whole document fails in the patch library: kube's bare 422.
  if (result === null || typeof result !== 'object' || Array.isArray(result)) throw patchFailed();
  const object = result as Record<string, unknown>;
  try {
    object['metadata'] = decodeObjectMeta(object['metadata']);
  } catch (error) {
    if (error instanceof MetaDecodeError) throw undecodable(error.message);
    throw error;
  }
  const patched = object as ApiObject;
  const name = patched.metadata.name ?? '';
  if (name !== call.info.name) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${call.info.name})`);
  checkTypeMeta(call, patched);
  return patched;
}

function applyPatch(type: string, current: ApiObject, patch: unknown): unknown {
  if (type === patchTypes.merge) return mergePatch(current, patch);
  // A null patch decodes to no operations; a null operation to one without op, which Apply refuses.
  const operations = (patch ?? []) as (jsonPatch.Operation | null)[];
  if (operations.includes(null)) throw patchFailed();
  try {
    return jsonPatch.applyPatch(structuredClone(current), operations as jsonPatch.Operation[], true, false).newDocument;
  } catch (error) {
    if (error instanceof jsonPatch.JsonPatchError) throw patchFailed();
    throw error;
  }
}

/**
 * A merge patch is an object. Unless fieldValidation is Ignore kube first
 * decodes it into a map (null passes); jsonpatch.MergePatch refuses null
 * with ErrBadJSONPatch and returns any other value as the patched document,
 * which then cannot be decoded as an object.
 */
function checkMergePatch(patch: unknown, write: WriteParameters): void {
  if (patch !== null && typeof patch === 'object' && !Array.isArray(patch)) return;
  if (patch === null) throw badRequest('Invalid JSON Patch');
  const kind = Array.isArray(patch) ? 'array' : typeof patch === 'boolean' ? 'bool' : typeof patch;
  if (write.fieldValidation !== 'Ignore') {
    throw badRequest(`error decoding patch: json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`);
  }
  const typeMeta = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';
  throw invalid('', '', '', [
    invalidValue('patch', JSON.stringify(patch), `couldn't get version/kind; json parse error: json: cannot unmarshal ${kind} into Go value of type ${typeMeta}`),
  ]);
}

/** NewGenericServerResponse(422) for an operation the patch library refuses: kube drops the library's text. */
function patchFailed(): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

/**
 * The decoding kube applies to a JSON patch before running it: into
 * []handlers.jsonPatchOp (op, path, from as strings) unless fieldValidation
 * is Ignore, else jsonpatch.DecodePatch. A malformed operation is a 400.
 */
function checkJsonPatch(patch: unknown, write: WriteParameters): void {
  const strict = write.fieldValidation !== 'Ignore';
  const kind = (value: unknown): string => (Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'boolean' ? 'bool' : typeof value);
  const refuse = (message: string): ApiError => badRequest(strict ? `error decoding patch: ${message}` : message);
  if (!Array.isArray(patch)) {
    if (patch === null) return;
    throw refuse(`json: cannot unmarshal ${kind(patch)} into Go value of type ${strict ? '[]handlers.jsonPatchOp' : 'jsonpatch.Patch'}`);
  }
  const operations: unknown[] = patch;
  for (const operation of operations) {
    if (operation === null) continue;
    if (typeof operation !== 'object' || Array.isArray(operation)) {
      throw refuse(`json: cannot unmarshal ${kind(operation)} into Go value of type ${strict ? 'handlers.jsonPatchOp' : 'jsonpatch.Operation'}`);
    }
    if (!strict) continue;
    for (const field of ['op', 'path', 'from'] as const) {
      const value = (operation as Record<string, unknown>)[field];
      if (value !== undefined && value !== null && typeof value !== 'string') {
        throw refuse(`json: cannot unmarshal ${kind(value)} into Go struct field jsonPatchOp.${field} of type string`);
      }
    }
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortKeys(item)]));
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

async function applyObject(call: WriteCall, text: string, write: WriteParameters): Promise<void> {
  // An apply configuration is a YAML (or JSON) document.
  const decoded = await decodeObject(text, 'application/yaml');
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) throw badRequest('the apply configuration must be an object');
  const rawMetadata = (decoded as Record<string, unknown>)['metadata'];
  const configuration = withTypedMetadata(call, decoded as Record<string, unknown>);
  if (configuration.metadata.managedFields !== undefined || (isRecord(rawMetadata) && rawMetadata['managedFields'] !== undefined)) {
    throw badRequest('metadata.managedFields must be nil');
  }
  checkTypeMeta(call, configuration);
  const name = configuration.metadata.name;
  if (name !== undefined && name !== call.info.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${call.info.name})`);
  }
  configuration.metadata.name = call.info.name;
  const current = await currentOrUndefined(call);
  if (current === undefined) {
    const uid = configuration.metadata.uid;
    if (uid !== undefined && uid !== '') {
      throw conflict(call.gr, call.info.name, `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`);
    }
  }
  // What the configuration sets of the object's metadata is validated as the update (or create) it becomes.
  const result: ApiObject = { ...configuration, metadata: { ...current?.metadata, ...configuration.metadata } };
  if (current === undefined) await admitCreate(call, result);
  else await admitUpdate(call, result, current);
  const applied = await call.resource.store.apply(call.info.namespace, call.info.name, configuration, subresourceOf(call), write);
  sendWarnings(call.res, applied.warnings);
  respondObject(call.req, call.res, 200, applied.object, call.resource.strategy);
}

async function currentOrUndefined(call: WriteCall): Promise<ApiObject | undefined> {
  try {
    return await call.resource.store.get(call.info.namespace, call.info.name, undefined);
  } catch (error) {
    if (error instanceof ApiError && error.reason === 'NotFound') return undefined;
    throw error;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
