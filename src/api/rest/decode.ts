/**
 * Turning a write's body into an object the store may be given, in
 * kube-apiserver's order (k8s.io/apiserver/pkg/endpoints/handlers create.go,
 * update.go, rest.go transformDecodeError): media type, decoding (typed
 * ObjectMeta, strict decoding of repeated fields), type meta, namespace,
 * then validation (ObjectMeta for every kind, then the kind's rules) and
 * the kind's admission.
 */
import { requestUser } from '../../server/context.js';
import { invalid, type FieldError } from '../field-errors.js';
import { decodeObjectMeta, MetaDecodeError, resetForUpdate, validateObjectMetaCreate, validateObjectMetaUpdate } from '../object-meta.js';
import { loadSchemaSource, type K8sSchema } from '../openapi/schema-source.js';
import { badRequest } from '../status.js';
import { decodeObject, mediaType, readBody, strictDecodingWarnings } from './body.js';
import { maxReported, type PruneSchema, type StrictErrors } from './body-worker.js';
import type { WriteCall } from './contracts.js';
import type { WriteParameters } from './query.js';
import type { ApiObject } from './types.js';

export interface DecodedBody {
  readonly object: ApiObject;
  /** Warnings to send with the response (duplicate fields under fieldValidation=Warn). */
  readonly warnings: string[];
}

/**
 * Decodes a create/update body, applying kube's strict-decoding rule for
 * repeated keys, which are lost once the body is parsed, and unknown
 * fields, pruned against the kind's schema as kube prunes a CRD's objects
 * (on the worker for large bodies, so a body of 100,000 unknown fields
 * never reaches this thread whole).
 */
export async function decodeBody(call: WriteCall, write: WriteParameters): Promise<DecodedBody> {
  const text = await readBody(call.req);
  const decoded = await decodeObject(text, mediaType(call.req), { schema: pruneSchemaOf(call) });
  const object = objectOf(call, decoded.value);
  return { object, warnings: strictDecoding(call, write, [decoded.duplicates, decoded.unknownFields]) };
}

/**
 * kube's fieldValidation for strict-decoding errors (handlers/create.go,
 * update.go, patch.go): Strict refuses the body naming them all, Warn (the
 * default) turns each into a Warning, Ignore says nothing.
 */
export function strictDecoding(call: WriteCall, write: WriteParameters, errors: readonly StrictErrors[]): string[] {
  const found = errors.filter((e) => e.count > 0);
  if (found.length === 0 || write.fieldValidation === 'Ignore') return [];
  if (write.fieldValidation === 'Strict') throw cannotBeHandled(call, `strict decoding error: ${found.map((e) => e.message).join(', ')}`);
  return strictDecodingWarnings(found.flatMap((e) => e.first))
    .slice(0, maxReported)
    .map((w) => `299 - ${JSON.stringify(w)}`);
}

function objectOf(call: WriteCall, value: unknown): ApiObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest('the body of the request must be an object');
  const object = withTypedMetadata(call, value as Record<string, unknown>);
  checkTypeMeta(call, object);
  return object;
}

const pruneSchemas = new Map<string, PruneSchema>();

/** The kind's schema as pruning reads it (no descriptions or validations: it is copied to the worker per request). */
export function pruneSchemaOf(call: WriteCall): PruneSchema {
  const { schemaName } = call.resource.strategy.descriptor;
  let schema = pruneSchemas.get(schemaName);
  if (schema === undefined) {
    schema = structureOf(loadSchemaSource().resolvedObjectSchema(schemaName));
    pruneSchemas.set(schemaName, schema);
  }
  return schema;
}

function structureOf(schema: K8sSchema): PruneSchema {
  const { properties, additionalProperties, items } = schema;
  return {
    ...(properties === undefined ? {} : { properties: Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, structureOf(value)])) }),
    ...(additionalProperties === undefined ? {} : { additionalProperties: typeof additionalProperties === 'boolean' ? additionalProperties : structureOf(additionalProperties) }),
    ...(items === undefined ? {} : { items: structureOf(items) }),
    ...(schema['x-kubernetes-preserve-unknown-fields'] === true ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
    ...(schema['x-kubernetes-embedded-resource'] === true ? { 'x-kubernetes-embedded-resource': true } : {}),
  };
}

/** The 400 kube answers for a body it cannot decode (transformDecodeError). */
export function cannotBeHandled(call: WriteCall, reason: string): ReturnType<typeof badRequest> {
  const kind = call.resource.strategy.descriptor.kind;
  return badRequest(`${kind} in version "${call.gv.version}" cannot be handled as a ${kind}: ${reason}`);
}

/** The object with its metadata decoded as metav1.ObjectMeta; a wrongly typed field is a 400. */
export function withTypedMetadata(call: WriteCall, body: Record<string, unknown>): ApiObject {
  try {
    body['metadata'] = decodeObjectMeta(body['metadata']);
  } catch (error) {
    if (error instanceof MetaDecodeError) throw cannotBeHandled(call, error.message);
    throw error;
  }
  return body as ApiObject;
}

export function checkTypeMeta(call: WriteCall, object: ApiObject): void {
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

/** Create: ObjectMeta validation, then the kind's rules (422), then admission. */
export async function admitCreate(call: WriteCall, object: ApiObject): Promise<void> {
  await admit(call, object, validateObjectMetaCreate(object.metadata));
}

/** Update (PUT, patch): kube's BeforeUpdate resets and ObjectMeta update validation against the stored object, then as create. */
export async function admitUpdate(call: WriteCall, object: ApiObject, current: ApiObject): Promise<void> {
  if (call.info.subresource === 'status') {
    // A status write keeps the stored metadata whatever it sends (the CRD status strategy's PrepareForUpdate).
    object.metadata = { ...current.metadata };
    await admit(call, object, []);
    return;
  }
  resetForUpdate(object.metadata, current.metadata);
  await admit(call, object, validateObjectMetaUpdate(object.metadata, current.metadata));
}

async function admit(call: WriteCall, object: ApiObject, metaErrors: readonly FieldError[]): Promise<void> {
  const { strategy } = call.resource;
  const errors = [...metaErrors, ...strategy.validate(object, call.info.namespace)];
  if (errors.length > 0) throw invalid(call.gv.group, strategy.descriptor.kind, object.metadata.name ?? '', errors);
  if (strategy.admit === undefined || call.info.subresource !== '') return;
  await strategy.admit({ user: requestUser(call.req), namespace: call.info.namespace, object });
}

export function subresourceOf(call: WriteCall): '' | 'status' {
  return call.info.subresource === 'status' ? 'status' : '';
}
