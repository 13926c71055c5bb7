/**
 * The generic REST layer: every verb of every served resource, written once.
 * A resource contributes only its descriptor, its strategy (validation,
 * table columns) and its store; this module owns request decoding, verb
 * semantics, preconditions, patching and the response representations.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { Router as createRouter } from 'express';
import jsonPatch from 'fast-json-patch';
import type { UserInfo } from '../../auth/user.js';
import { requestContext, requestUser } from '../../server/context.js';
import { writeJson } from '../../server/respond.js';
import { invalid, required, type FieldError } from '../field-errors.js';
import type { ResourceRequestInfo } from '../request-info.js';
import { groupVersionString, type ApiGroupVersion, type ResourceDescriptor, type Verb } from '../resource.js';
import {
  ApiError,
  badRequest,
  conflict,
  methodNotAllowed,
  optimisticLockMessage,
  pathNotFound,
  unsupportedMediaType,
  type GroupResource,
} from '../status.js';
import { decodeObject, duplicateFields, mediaType, parseJson, patchTypes, readBody } from './body.js';
import { respondList, respondObject, type TableColumn } from './representation.js';
import {
  matchesFieldSelector,
  parseDeleteParameters,
  parseListParameters,
  parseWriteParameters,
  type ListParameters,
  type ListScope,
  type WriteParameters,
} from './query.js';
import type { ReadableStore, WritableStore } from './store.js';
import type { ApiObject, ObjectList } from './types.js';
import { serveWatch } from './watch.js';

export interface ResourceStrategy {
  readonly descriptor: ResourceDescriptor;
  readonly columns: readonly TableColumn[];
}

export interface WritableResourceStrategy extends ResourceStrategy {
  /** Semantic rules the schema cannot express; run on create and update. */
  validate(object: ApiObject, namespace: string): FieldError[];
  /**
   * Checks that need the requester, run after validation on every write of
   * the main resource (not its status); throws an ApiError to refuse.
   */
  admit?(request: AdmissionRequest): Promise<void>;
}

export interface AdmissionRequest {
  readonly user: UserInfo;
  readonly namespace: string;
  readonly object: ApiObject;
}

/** Served with get, list and watch only: it has no write path to dispatch to. */
export interface ReadOnlyResource {
  readonly access: 'read-only';
  readonly strategy: ResourceStrategy;
  readonly store: ReadableStore;
}

export interface ReadWriteResource {
  readonly access: 'read-write';
  readonly strategy: WritableResourceStrategy;
  readonly store: WritableStore;
}

export type RestResource = ReadOnlyResource | ReadWriteResource;

interface Call<R extends RestResource = RestResource> {
  readonly req: Request;
  readonly res: Response;
  readonly info: ResourceRequestInfo;
  readonly url: URL;
  readonly resource: R;
  readonly gv: ApiGroupVersion;
  readonly gr: GroupResource;
}

type WriteCall = Call<ReadWriteResource>;

const readVerbs: readonly Verb[] = ['get', 'list', 'watch'];

const maxGenerateNameAttempts = 8;
const maxPatchAttempts = 5;

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
  // Cluster scope is only a collection (list/watch across namespaces).
  return info.namespace !== '' || (info.name === '' && (info.verb === 'list' || info.verb === 'watch'));
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

async function getObject(call: Call): Promise<void> {
  const rv = call.url.searchParams.get('resourceVersion') ?? undefined;
  const object = await call.resource.store.get(call.info.namespace, call.info.name, rv === '' ? undefined : rv);
  respondObject(call.req, call.res, 200, object, call.resource.strategy);
}

function listScope(call: Call, params: ListParameters = parseListParameters(call.url.searchParams)): ListScope {
  const urlNamespace = call.info.namespace === '' ? undefined : call.info.namespace;
  const selectedNamespace = params.fieldSelector.requiresExactMatch('metadata.namespace');
  const possible = urlNamespace === undefined || selectedNamespace === undefined || selectedNamespace === urlNamespace;
  return { namespace: urlNamespace ?? selectedNamespace, possible, name: params.fieldSelector.requiresExactMatch('metadata.name') };
}

async function listAll(call: Call, params: ListParameters): Promise<ObjectList> {
  const scope = listScope(call, params);
  const list = await call.resource.store.list(scope.namespace, {
    labelSelector: params.labelSelectorText,
    name: scope.name,
    limit: params.limit,
    continue: params.continue,
    resourceVersion: params.resourceVersion,
    resourceVersionMatch: params.resourceVersionMatch,
  });
  const items = scope.possible ? list.items.filter((o) => matchesFieldSelector(params, o)) : [];
  return { ...list, items };
}

async function listObjects(call: Call): Promise<void> {
  const params = parseListParameters(call.url.searchParams);
  respondList(call.req, call.res, await listAll(call, params), call.resource.strategy);
}

interface DecodedBody {
  readonly object: ApiObject;
  /** Warnings to send with the response (duplicate fields under fieldValidation=Warn). */
  readonly warnings: string[];
}

/**
 * Decodes a create/update body, applying kube's strict-decoding rule for
 * repeated fields, which are lost once the body is parsed and re-encoded
 * for the record. (Unknown fields are the record's CRD's business: kube
 * reports them with the same wording.)
 */
async function decodeBody(call: WriteCall, write: WriteParameters): Promise<DecodedBody> {
  const text = await readBody(call.req);
  const type = mediaType(call.req);
  const object = decodeObjectBody(call, text, type);
  const duplicates = type === 'application/json' || type === '' ? duplicateFields(text) : [];
  if (duplicates.length === 0 || write.fieldValidation === 'Ignore') return { object, warnings: [] };
  const problems = duplicates.map((path) => `duplicate field "${path}"`);
  if (write.fieldValidation === 'Strict') {
    const kind = call.resource.strategy.descriptor.kind;
    throw badRequest(`${kind} in version "${call.gv.version}" cannot be handled as a ${kind}: strict decoding error: ${problems.join(', ')}`);
  }
  return { object, warnings: problems.map((p) => `299 - ${JSON.stringify(p)}`) };
}

function decodeObjectBody(call: WriteCall, text: string, type: string): ApiObject {
  const body = decodeObject(text, type);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body of the request must be an object');
  const object = withMetadata(body as Record<string, unknown>);
  checkTypeMeta(call, object);
  return object;
}

/** Decoded JSON may lack metadata (or carry a non-object there); give it an empty one. */
function withMetadata(body: Record<string, unknown>): ApiObject {
  if (body['metadata'] === null || typeof body['metadata'] !== 'object') body['metadata'] = {};
  return body as ApiObject;
}

function checkTypeMeta(call: WriteCall, object: ApiObject): void {
  const expected = `${call.gv.group}/${call.gv.version}`;
  if (object.apiVersion !== undefined && object.apiVersion !== expected) {
    throw badRequest(`the API version in the data (${object.apiVersion}) does not match the expected API version (${expected})`);
  }
  const kind = call.resource.strategy.descriptor.kind;
  if (object.kind !== undefined && object.kind !== kind) {
    throw badRequest(`the kind in the data (${object.kind}) does not match the expected kind (${kind})`);
  }
  object.apiVersion = expected;
  object.kind = kind;
  const namespace = object.metadata.namespace;
  if (namespace !== undefined && namespace !== '' && namespace !== call.info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  object.metadata.namespace = call.info.namespace;
}

/** Validation (422), then the strategy's admission checks on the requester, as kube runs admission after decoding. */
async function admitOrThrow(call: WriteCall, object: ApiObject): Promise<void> {
  const { strategy } = call.resource;
  const errors = strategy.validate(object, call.info.namespace);
  if (errors.length > 0) throw invalid(call.gv.group, strategy.descriptor.kind, object.metadata.name ?? '', errors);
  if (strategy.admit === undefined || call.info.subresource !== '') return;
  await strategy.admit({ user: requestUser(call.req), namespace: call.info.namespace, object });
}

async function createObject(call: WriteCall): Promise<void> {
  const write = parseWriteParameters(call.url.searchParams);
  const { object, warnings } = await decodeBody(call, write);
  const prefix = object.metadata.generateName;
  if ((object.metadata.name ?? '') === '' && (prefix ?? '') === '') {
    throw invalid(call.gv.group, call.resource.strategy.descriptor.kind, '', [required('metadata.name', 'name or generateName is required')]);
  }
  // The status subresource owns status: a create never sets it (CRD PrepareForCreate).
  Reflect.deleteProperty(object, 'status');
  for (let attempt = 1; ; attempt++) {
    if ((object.metadata.name ?? '') === '' || (prefix !== undefined && attempt > 1)) object.metadata.name = generatedName(prefix ?? '');
    await admitOrThrow(call, object);
    try {
      const created = await call.resource.store.create(call.info.namespace, object, write);
      sendWarnings(call.res, [...warnings, ...created.warnings]);
      respondObject(call.req, call.res, 201, created.object, call.resource.strategy);
      return;
    } catch (error) {
      const retry = prefix !== undefined && error instanceof ApiError && error.reason === 'AlreadyExists' && attempt < maxGenerateNameAttempts;
      if (!retry) throw error;
    }
  }
}

/** storage/names: the prefix (cut to 58) plus five random [a-z0-9] characters. */
function generatedName(prefix: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const suffix = [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
  return `${prefix.slice(0, 58)}${suffix}`;
}

async function updateObject(call: WriteCall): Promise<void> {
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

function subresourceOf(call: WriteCall): '' | 'status' {
  return call.info.subresource === 'status' ? 'status' : '';
}

async function patchObject(call: WriteCall): Promise<void> {
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
  const decoded = decodeObject(text, patchTypes.apply);
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

async function deleteObject(call: WriteCall): Promise<void> {
  const text = await readBody(call.req);
  const options = parseDeleteParameters(call.url.searchParams, text.trim() === '' ? undefined : parseJson(text));
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
async function deleteOne(call: WriteCall, name: string, options: ReturnType<typeof parseDeleteParameters>) {
  const gcFinalizer =
    options.propagationPolicy === 'Foreground' ? 'foregroundDeletion' : options.propagationPolicy === 'Orphan' || options.orphanDependents === true ? 'orphan' : undefined;
  const store = call.resource.store;
  if (gcFinalizer !== undefined && options.dryRun === undefined) {
    const current = await store.get(call.info.namespace, name, undefined);
    checkPreconditions(call.gr, name, current, options.preconditions);
    const finalizers = current.metadata.finalizers ?? [];
    if (current.metadata.deletionTimestamp === undefined && !finalizers.includes(gcFinalizer)) {
      current.metadata.finalizers = [...finalizers.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion'), gcFinalizer];
      await store.update(call.info.namespace, current, '', {});
    }
  }
  return store.delete(call.info.namespace, name, options);
}

function checkPreconditions(gr: GroupResource, name: string, current: ApiObject, preconditions: { uid?: string; resourceVersion?: string } | undefined): void {
  if (preconditions?.uid !== undefined && preconditions.uid !== current.metadata.uid) {
    throw conflict(gr, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
  }
  if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== current.metadata.resourceVersion) {
    throw conflict(gr, name, optimisticLockMessage);
  }
}

async function deleteCollection(call: WriteCall): Promise<void> {
  const text = await readBody(call.req);
  const options = parseDeleteParameters(call.url.searchParams, text.trim() === '' ? undefined : parseJson(text));
  const list = await listAll(call, parseListParameters(call.url.searchParams));
  const deleted: ApiObject[] = [];
  for (const object of list.items) {
    try {
      const result = await deleteOne(call, object.metadata.name ?? '', options);
      deleted.push(result.kind === 'pending' ? result.object : object);
    } catch (error) {
      // Already gone is what the caller wanted.
      if (!(error instanceof ApiError && error.reason === 'NotFound')) throw error;
    }
  }
  respondList(call.req, call.res, { ...list, items: deleted }, call.resource.strategy);
}

function sendWarnings(res: Response, warnings: readonly string[]): void {
  if (warnings.length > 0) res.setHeader('Warning', [...warnings]);
}

