/**
 * Turning a write's body into an object the store may be given: media type,
 * strict decoding of repeated fields, type meta, namespace, then validation
 * and the kind's admission (kube's decode → admission → validation order).
 */
import { requestUser } from '../../server/context.js';
import { invalid } from '../field-errors.js';
import { badRequest } from '../status.js';
import { decodeObject, duplicateFields, mediaType, readBody } from './body.js';
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
 * repeated fields, which are lost once the body is parsed and re-encoded
 * for the record. (Unknown fields are the record's CRD's business: kube
 * reports them with the same wording.)
 */
export async function decodeBody(call: WriteCall, write: WriteParameters): Promise<DecodedBody> {
  const text = await readBody(call.req);
  const type = mediaType(call.req);
  const object = await decodeObjectBody(call, text, type);
  const duplicates = type === 'application/json' || type === '' ? duplicateFields(text) : [];
  if (duplicates.length === 0 || write.fieldValidation === 'Ignore') return { object, warnings: [] };
  const problems = duplicates.map((path) => `duplicate field "${path}"`);
  if (write.fieldValidation === 'Strict') {
    const kind = call.resource.strategy.descriptor.kind;
    throw badRequest(`${kind} in version "${call.gv.version}" cannot be handled as a ${kind}: strict decoding error: ${problems.join(', ')}`);
  }
  return { object, warnings: problems.map((p) => `299 - ${JSON.stringify(p)}`) };
}

export async function decodeObjectBody(call: WriteCall, text: string, type: string): Promise<ApiObject> {
  const body = await decodeObject(text, type);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body of the request must be an object');
  const object = withMetadata(body as Record<string, unknown>);
  checkTypeMeta(call, object);
  return object;
}

/** Decoded JSON may lack metadata (or carry a non-object there); give it an empty one. */
export function withMetadata(body: Record<string, unknown>): ApiObject {
  if (body['metadata'] === null || typeof body['metadata'] !== 'object') body['metadata'] = {};
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

/** Validation (422), then the strategy's admission checks on the requester, as kube runs admission after decoding. */
export async function admitOrThrow(call: WriteCall, object: ApiObject): Promise<void> {
  const { strategy } = call.resource;
  const errors = strategy.validate(object, call.info.namespace);
  if (errors.length > 0) throw invalid(call.gv.group, strategy.descriptor.kind, object.metadata.name ?? '', errors);
  if (strategy.admit === undefined || call.info.subresource !== '') return;
  await strategy.admit({ user: requestUser(call.req), namespace: call.info.namespace, object });
}

export function subresourceOf(call: WriteCall): '' | 'status' {
  return call.info.subresource === 'status' ? 'status' : '';
}
