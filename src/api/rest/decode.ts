/**
 * Turning a write's body into an object the store may be given, in
 * kube-apiserver's order (k8s.io/apiserver/pkg/endpoints/handlers create.go,
 * update.go, rest.go transformDecodeError): media type, decoding (the
 * body's own type meta, numbers, kind; typed ObjectMeta; strict decoding
 * of repeated and unknown fields), apiVersion, namespace, then validation
 * (type meta, ObjectMeta for every kind, then the kind's rules) and the
 * kind's admission.
 */
import { requestUser } from '../request-context.js';
import { invalid, invalidValue, type FieldError } from '../field-errors.js';
import { decodeObjectMeta, MetaDecodeError, resetForUpdate, validateObjectMetaCreate, validateObjectMetaUpdate } from '../object-meta.js';
import { loadSchemaSource } from '../openapi/schema-source.js';
import type { K8sSchema } from '../openapi/schema.js';
import { badRequest } from '../status.js';
import { decodeObject, mediaType, readBodyBytes, strictDecodingWarnings, type DecodedDocument } from './body.js';
import { groupVersionString, interpretTypeMeta, parseGroupVersion, summarizeData, withDefaults, yamlReaderError } from './body-type-meta.js';
import { maxReported, type StrictErrors } from './body-worker.js';
import { firstOverflowingNumber } from './json-scan.js';
import type { PruneSchema } from './prune.js';
import type { WriteCall } from './contracts.js';
import { goJsonSyntaxError } from './go-json-syntax.js';
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
  const bytes = await readBodyBytes(call.req);
  const { object, decoded } = await decodeObjectBody(call, bytes, mediaType(call.req));
  return { object, warnings: strictDecoding(call, write, [decoded.duplicates, decoded.unknownFields]) };
}

/**
 * A create or update body, decoded as kube's json serializer decodes it into
 * Unstructured: YAML's reader, the syntax, apiVersion and kind as strings
 * (Interpret), numbers float64 can hold, a kind present; then ObjectMeta,
 * the apiVersion the endpoint serves and the namespace. The kind itself is
 * validated later, as kube's custom resource validator does (422).
 */
async function decodeObjectBody(call: WriteCall, bytes: Buffer, type: string): Promise<{ object: ApiObject; decoded: DecodedDocument }> {
  const expectedKind = call.resource.strategy.descriptor.kind;
  const unrecognized = (reason: string): ReturnType<typeof badRequest> =>
    badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): ${reason} (${summarizeData(bytes)})`);
  const yamlError = type === 'application/yaml' ? yamlReaderError(bytes) : undefined;
  if (yamlError !== undefined) throw unrecognized(yamlError);
  const json = type === 'application/json' || type === '';
  const text = bytes.toString('utf8');
  const decoded = await decodeObject(text, type, { schema: pruneSchemaOf(call) }).catch((error: unknown) => {
    // JSON.parse's words are not Go's: kube's Interpret reports encoding/json's syntax error.
    const syntax = json ? goJsonSyntaxError(bytes) : undefined;
    throw syntax === undefined ? error : unrecognized(`couldn't get version/kind; json parse error: ${syntax}`);
  });
  const body = decoded.value;
  const meta = interpretTypeMeta(body);
  if ('error' in meta) throw unrecognized(meta.error);
  const overflow = json ? firstOverflowingNumber(text)?.literal : undefined;
  if (overflow !== undefined) {
    throw cannotBeHandled(call, `json: cannot unmarshal number ${overflow} into Go value of type float64`, withDefaults(meta, call.gv, expectedKind));
  }
  const kind = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)['kind'] : undefined;
  if (typeof kind !== 'string' || kind === '') throw unrecognized(`Object 'Kind' is missing in '${text}'`);
  const object = withTypedMetadata(call, body as Record<string, unknown>, withDefaults(meta, call.gv, expectedKind));
  checkBodyApiVersion(call, object);
  return { object, decoded };
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

/** The 400 kube answers for a body it cannot decode (transformDecodeError), naming what the body says it is. */
export function cannotBeHandled(call: WriteCall, reason: string, named?: { readonly version: string; readonly kind: string }): ReturnType<typeof badRequest> {
  const kind = call.resource.strategy.descriptor.kind;
  return badRequest(`${named?.kind ?? kind} in version "${named?.version ?? call.gv.version}" cannot be handled as a ${kind}: ${reason}`);
}

/** The object with its metadata decoded as metav1.ObjectMeta; a wrongly typed field is a 400. */
export function withTypedMetadata(call: WriteCall, body: Record<string, unknown>, named?: { readonly version: string; readonly kind: string }): ApiObject {
  try {
    body['metadata'] = decodeObjectMeta(body['metadata']);
  } catch (error) {
    if (error instanceof MetaDecodeError) throw cannotBeHandled(call, error.message, named);
    throw error;
  }
  return body as ApiObject;
}

/**
 * handlers/rest.go checkName: the object must carry the URL's name; with none
 * at all kube cannot tell which object it is.
 */
export function checkObjectName(call: WriteCall, name: string): void {
  if (name === '') throw badRequest(`the name of the object (${call.info.name} based on URL) was undeterminable: name must be provided`);
  if (name !== call.info.name) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${call.info.name})`);
}

/** create.go/update.go: the body's own apiVersion (none is none) must be the endpoint's; then the namespace. */
function checkBodyApiVersion(call: WriteCall, object: ApiObject): void {
  const expected = `${call.gv.group}/${call.gv.version}`;
  const named = parseGroupVersion(typeof object.apiVersion === 'string' ? object.apiVersion : '');
  const actual = 'error' in named ? '' : groupVersionString(named);
  if (actual !== expected) throw badRequest(`the API version in the data (${actual}) does not match the expected API version (${expected})`);
  object.apiVersion = expected;
  checkNamespace(call, object);
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
  checkNamespace(call, object);
}

function checkNamespace(call: WriteCall, object: ApiObject): void {
  const namespace = object.metadata.namespace;
  if (namespace !== undefined && namespace !== '' && namespace !== call.info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  object.metadata.namespace = call.info.namespace;
}

/** Create: ObjectMeta validation, then the kind's rules (422), then admission. */
export async function admitCreate(call: WriteCall, object: ApiObject): Promise<void> {
  await admit(call, object, validateObjectMetaCreate(object.metadata), 'create');
}

/** Update (PUT, patch): kube's BeforeUpdate resets and ObjectMeta update validation against the stored object, then as create. */
export async function admitUpdate(call: WriteCall, object: ApiObject, current: ApiObject): Promise<void> {
  if (call.info.subresource === 'status') {
    // A status write keeps the stored metadata whatever it sends (the CRD status strategy's PrepareForUpdate).
    object.metadata = { ...current.metadata };
    await admit(call, object, [], 'update');
    return;
  }
  resetForUpdate(object.metadata, current.metadata);
  await admit(call, object, validateObjectMetaUpdate(object.metadata, current.metadata), 'update');
}

async function admit(call: WriteCall, object: ApiObject, metaErrors: readonly FieldError[], verb: 'create' | 'update'): Promise<void> {
  const { strategy } = call.resource;
  const { kind } = strategy.descriptor;
  // The custom resource validator checks the kind first and then reports nothing else; an update's ObjectMeta errors come before it (rest.BeforeUpdate).
  if (object.kind !== kind) {
    const kindError = invalidValue('kind', object.kind, `must be ${kind}`);
    throw invalid(call.gv.group, object.kind ?? '', object.metadata.name ?? '', verb === 'update' ? [...metaErrors, kindError] : [kindError]);
  }
  const errors = [...metaErrors, ...strategy.validate(object, call.info.namespace)];
  if (errors.length > 0) throw invalid(call.gv.group, kind, object.metadata.name ?? '', errors);
  if (strategy.admit === undefined || call.info.subresource !== '') return;
  await strategy.admit({ user: requestUser(call.req), namespace: call.info.namespace, object });
}

export function subresourceOf(call: WriteCall): '' | 'status' {
  return call.info.subresource === 'status' ? 'status' : '';
}
