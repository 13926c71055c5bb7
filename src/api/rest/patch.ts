/**
 * patch, in k8s.io/apiserver handlers/patch.go order: output negotiation,
 * body, PatchOptions, then the stored object is read (kube decodes the
 * patch inside GuaranteedUpdate, so a missing object is a 404 whatever the
 * body) and the patch decoded and applied to it. Merge and JSON patches are
 * decoded as kube's strict decoding does, validated like an update (a
 * patched object that no longer decodes is kube's 422 on `patch`) and
 * retried on a conflict when the patch pins no resourceVersion; server-side
 * apply is apply.ts.
 */
import jsonPatch from 'fast-json-patch';
import { invalid, invalidValue } from '../field-errors.js';
import { decodeObjectMeta, MetaDecodeError } from '../object-meta.js';
import { ApiError, badRequest, conflict, optimisticLockMessage, unsupportedMediaType } from '../status.js';
import { checkJsonPatchSize, parseJson, parseJsonDocument, patchTypes, readBodyBytes } from './body.js';
import type { WriteCall } from './contracts.js';
import type { StrictErrors } from './body-worker.js';
import { firstOverflowingNumber } from './json-scan.js';
import { asKubePointer } from './json-patch-pointer.js';
import { parseGroupVersion } from './body-type-meta.js';
import { admitUpdate, checkObjectName, checkTypeMeta, pruneSchemaOf, strictDecoding, subresourceOf } from './decode.js';
import { parseWriteParameters, type WriteParameters } from './query.js';
import { negotiateOutputMediaType, respondObject, sendWarnings } from './representation.js';
import { applyObject } from './apply.js';
import { resourceVersionRequired } from './update.js';
import type { ApiObject } from './types.js';

const maxPatchAttempts = 5;

export async function patchObject(call: WriteCall): Promise<void> {
  const type = patchType(call.req.headers['content-type'] ?? '');
  if (type !== patchTypes.merge && type !== patchTypes.json && type !== patchTypes.apply) {
    throw unsupportedMediaType([patchTypes.json, patchTypes.merge, patchTypes.apply]);
  }
  negotiateOutputMediaType(call.req);
  const body = await readBodyBytes(call.req);
  const write = parseWriteParameters(call.url.searchParams, { patchType: type });
  if (type === patchTypes.apply) {
    await applyObject(call, body, write);
    return;
  }
  // kube decodes a patch inside GuaranteedUpdate, after reading the object: a missing object is a 404 whatever the body.
  let current = await call.resource.store.get(call.info.namespace, call.info.name, undefined);
  const { patch, unknownFields } = await decodePatch(call, type, body.toString('utf8'), write);
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1) current = await call.resource.store.get(call.info.namespace, call.info.name, undefined);
    const patched = patchedObject(call, type, current, patch);
    const precondition = patched.metadata.resourceVersion;
    // A resourceVersion inside the patch is a precondition, never overwritten by a retry.
    const pinned = precondition !== current.metadata.resourceVersion;
    // A patch that empties resourceVersion leaves the store nothing to compare (status patches too).
    if (precondition === '') throw resourceVersionRequired(call);
    if (pinned && precondition !== undefined) throw conflict(call.gr, call.info.name, optimisticLockMessage);
    await admitUpdate(call, patched, current);
    const decodingWarnings = unknownFields === undefined ? [] : strictDecoding(call, write, [unknownFields]);
    try {
      const updated = await call.resource.store.update(call.info.namespace, patched, subresourceOf(call), write);
      sendWarnings(call.res, [...decodingWarnings, ...updated.warnings]);
      respondObject(call.req, call.res, 200, updated.object, call.resource.strategy);
      return;
    } catch (error) {
      const isConflict = error instanceof ApiError && error.reason === 'Conflict';
      if (!isConflict || pinned || attempt >= maxPatchAttempts) throw error;
    }
  }
}

/** The patch as kube decodes it before applying it; decoding errors are 400s. */
async function decodePatch(call: WriteCall, type: string, text: string, write: WriteParameters): Promise<{ patch: unknown; unknownFields: StrictErrors | undefined }> {
  if (type === patchTypes.json) {
    const patch = parseJson(text);
    // kube decodes the operations first, then counts them (handlers/patch.go).
    checkJsonPatch(patch, text, write);
    checkJsonPatchSize(patch);
    return { patch, unknownFields: undefined };
  }
  // A merge patch is pruned like a body (in the worker when large): unknown fields never reach this thread whole.
  const { value: patch, unknownFields } = await parseJsonDocument(text, { schema: pruneSchemaOf(call), mergePatch: true });
  checkMergePatch(patch, text, write);
  return { patch, unknownFields };
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
  checkObjectName(call, patched.metadata.name ?? '');
  checkPatchedKind(call, object, undecodable);
  if (subresourceOf(call) === 'status') {
    // The status strategy resets the type meta, after BeforeUpdate checked the namespace.
    patched.apiVersion = `${call.gv.group}/${call.gv.version}`;
    patched.kind = call.resource.strategy.descriptor.kind;
    checkTypeMeta(call, patched);
    return statusWrite(current, patched);
  }
  checkTypeMeta(call, patched);
  return patched;
}

/**
 * The CRD status strategy's PrepareForUpdate: a status write keeps all of
 * the stored object but its status (type meta and spec included, whatever
 * the patch made of them); the metadata stays for the preconditions and
 * admitUpdate, which restores the stored one.
 */
function statusWrite(current: ApiObject, patched: ApiObject): ApiObject {
  const { status: _storedStatus, ...stored } = current;
  const status = (patched as { status?: unknown }).status;
  return { ...stored, apiVersion: patched.apiVersion, kind: patched.kind, metadata: patched.metadata, ...(status === undefined ? {} : { status }) };
}

/**
 * The type meta of a patched object: kube's serializer reads apiVersion and
 * kind as strings first and parses the apiVersion (a 422 on `patch` when it
 * cannot), then the custom resource validator (ValidateTypeMeta) refuses a
 * kind or apiVersion the patch changed, named by the group and kind the
 * object now has. A status write takes both from the stored object.
 */
function checkPatchedKind(call: WriteCall, object: Record<string, unknown>, undecodable: (message: string) => ApiError): void {
  for (const field of ['apiVersion', 'kind']) {
    const value = object[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw undecodable(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goTypeName(value)} into Go struct field .${field} of type string`);
    }
  }
  // The serializer refuses to decode into an Unstructured without them (runtime.NewMissingKindErr, NewMissingVersionErr).
  const { kind, apiVersion } = object;
  if (typeof kind !== 'string' || kind === '') throw undecodable(`Object 'Kind' is missing in '${JSON.stringify(sortKeys(object))}'`);
  if (typeof apiVersion !== 'string' || apiVersion === '') throw undecodable(`Object 'apiVersion' is missing in '${JSON.stringify(sortKeys(object))}'`);
  const groupVersion = parseGroupVersion(apiVersion);
  if ('error' in groupVersion) throw undecodable(groupVersion.error);
  if (subresourceOf(call) === 'status') return;
  const expectedKind = call.resource.strategy.descriptor.kind;
  const expectedApiVersion = `${call.gv.group}/${call.gv.version}`;
  const errors = [
    ...(kind === expectedKind ? [] : [invalidValue('kind', kind, `must be ${expectedKind}`)]),
    ...(apiVersion === expectedApiVersion ? [] : [invalidValue('apiVersion', apiVersion, `must be ${expectedApiVersion}`)]),
  ];
  const name = (object['metadata'] as { name?: string } | undefined)?.name ?? '';
  if (errors.length > 0) throw invalid(groupVersion.group, kind, name, errors);
}

/** How Go's encoding/json names a JSON value's type in its errors. */
function goTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return value === null ? 'null' : typeof value;
}

function applyPatch(type: string, current: ApiObject, patch: unknown): unknown {
  if (type === patchTypes.merge) return mergePatch(current, patch);
  // A null patch decodes to no operations; a null operation to one without op, which Apply refuses.
  const operations = (patch ?? []) as (jsonPatch.Operation | null)[];
  if (operations.includes(null)) throw patchFailed();
  try {
    return jsonPatch.applyPatch(structuredClone(current), operations.map(withDefaultValue).map(withKubePointers), true, false).newDocument;
  } catch {
    // JsonPatchError, a plain Error for prototype paths (`/constructor/prototype/x`), a TypeError for an
    // operation on a document an earlier one removed: the operations fail on this object, as they do in kube.
    throw patchFailed();
  }
}

/** kube's JSON patch library adds or replaces with null where an operation has no value; fast-json-patch would refuse it. */
function withDefaultValue(operation: jsonPatch.Operation | null): jsonPatch.Operation {
  const op = operation as jsonPatch.Operation;
  if ((op.op === 'add' || op.op === 'replace') && !Object.hasOwn(op, 'value')) return { ...op, value: null } as jsonPatch.Operation;
  return op;
}

/** RFC 6902's operations, which kube's library knows; fast-json-patch also runs its internal `_get`. */
const jsonPatchOperations: ReadonlySet<string> = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** The operation's pointers as kube's library reads them; one that reaches nothing, or an unknown op, fails the patch. */
function withKubePointers(operation: jsonPatch.Operation): jsonPatch.Operation {
  // kube: `Unexpected kind`, its bare 422.
  if (!jsonPatchOperations.has(operation.op)) throw patchFailed();
  const pointers: Record<string, string> = {};
  for (const field of ['path', 'from'] as const) {
    const pointer: unknown = (operation as Partial<Record<typeof field, unknown>>)[field];
    if (typeof pointer !== 'string') continue;
    const read = asKubePointer(pointer, operation.op);
    if (read === undefined) throw patchFailed();
    pointers[field] = read;
  }
  return { ...operation, ...pointers };
}

/**
 * A merge patch is an object. Unless fieldValidation is Ignore kube first
 * decodes it into a map (null passes); jsonpatch.MergePatch refuses null
 * with ErrBadJSONPatch and returns any other value as the patched document,
 * which then cannot be decoded as an object.
 */
function checkMergePatch(patch: unknown, text: string, write: WriteParameters): void {
  if (patch !== null && typeof patch === 'object' && !Array.isArray(patch)) {
    const overflowing = write.fieldValidation === 'Ignore' ? undefined : firstOverflowingNumber(text);
    if (overflowing !== undefined) throw badRequest(`error decoding patch: json: cannot unmarshal number ${overflowing.literal} into Go value of type float64`);
    return;
  }
  if (patch === null) throw badRequest('Invalid JSON Patch');
  const kind = goTypeName(patch);
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
function checkJsonPatch(patch: unknown, text: string, write: WriteParameters): void {
  const strict = write.fieldValidation !== 'Ignore';
  const refuse = (message: string): ApiError => badRequest(strict ? `error decoding patch: ${message}` : message);
  if (!Array.isArray(patch)) {
    if (patch === null) return;
    throw refuse(`json: cannot unmarshal ${goTypeName(patch)} into Go value of type ${strict ? '[]handlers.jsonPatchOp' : 'jsonpatch.Patch'}`);
  }
  const operations: unknown[] = patch;
  // A value too large for a float64 fails the strict decoding of the operation holding it (in document order with the type errors).
  const overflowing = strict ? firstOverflowingNumber(text) : undefined;
  for (const [index, operation] of operations.entries()) {
    if (operation === null) continue;
    if (typeof operation !== 'object' || Array.isArray(operation)) {
      throw refuse(`json: cannot unmarshal ${goTypeName(operation)} into Go value of type ${strict ? 'handlers.jsonPatchOp' : 'jsonpatch.Operation'}`);
    }
    if (!strict) continue;
    for (const [field, value] of Object.entries(operation as Record<string, unknown>)) {
      if (field === 'value' && overflowing?.path[0] === index && overflowing.path[1] === 'value') {
        throw refuse(`json: cannot unmarshal number ${overflowing.literal} into Go struct field jsonPatchOp.value of type float64`);
      }
      if ((field === 'op' || field === 'path' || field === 'from') && value !== null && typeof value !== 'string') {
        throw refuse(`json: cannot unmarshal ${goTypeName(value)} into Go struct field jsonPatchOp.${field} of type string`);
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
