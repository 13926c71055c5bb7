/**
 * Request bodies: read raw, then decoded by media type, with the bounds
 * kube-apiserver puts on parse work (k8s.io/apiserver endpoints/handlers:
 * limitedReadBody, maxJSONPatchOperations; k8s.io/apimachinery util/json
 * maxDepth; go.yaml.in/yaml/v2 alias and depth limits). Only what a CRD
 * endpoint accepts is accepted. Every step is linear in the body's size and
 * no request holds the event loop for long: YAML goes to a worker thread.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest, unsupportedMediaType } from '../status.js';
import { parseContentType } from '../negotiation.js';
import { ACCEPTED_MEDIA_TYPES } from './output.js';
import { duplicateFields, jsonDepth } from './json-scan.js';
import { decodeYamlOffThread } from './yaml-decoder.js';

export { duplicateFields } from './json-scan.js';

export const bodyLimits = {
  /** kube's MaxRequestBodyBytes (3 MiB): a longer body is refused with 413. */
  maxBodyBytes: 3 * 1024 * 1024,
  /**
   * Nesting of objects and arrays. kube allows 10000; V8 cannot serialize
   * (JSON.stringify ~4400 levels) or clone (structuredClone ~1600) that deep
   * on its default stack, so this server stops well before.
   */
  maxDepth: 1000,
  /** kube's maxJSONPatchOperations. */
  maxJsonPatchOperations: 10_000,
} as const;

export const patchTypes = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  apply: 'application/apply-patch+yaml',
  strategic: 'application/strategic-merge-patch+json',
} as const;

function entityTooLarge(detail: string): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${detail}`);
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > bodyLimits.maxBodyBytes) throw entityTooLarge(`limit is ${bodyLimits.maxBodyBytes}`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The body's media type, '' when none was sent; one Go's mime.ParseMediaType rejects matches nothing served (kube's 415). */
export function mediaType(req: IncomingMessage): string {
  return parseContentType(req.headers['content-type']) ?? '(unparsable)';
}

/** kube picks the body's decoder before it reads options or the body: a type it has none for is its 415 first. */
export function checkObjectMediaType(req: IncomingMessage): void {
  const type = mediaType(req);
  if (type !== '' && type !== 'application/json' && type !== 'application/yaml') throw unsupportedMediaType(ACCEPTED_MEDIA_TYPES);
}

/** A JSON (or YAML, which kube also accepts for objects) object body. */
export async function decodeObject(text: string, type: string): Promise<unknown> {
  // kube reads a body without Content-Type as JSON.
  if (type === 'application/json' || type === '') return parseJson(text);
  if (type === 'application/yaml') return parseYamlDocument(text);
  throw unsupportedMediaType(ACCEPTED_MEDIA_TYPES);
}

/** JSON.parse is iterative and linear; the depth bound protects the recursive code after it. */
export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw badRequest(`the body of the request could not be decoded: ${(error as Error).message}`);
  }
  checkJsonDepth(text);
  return value;
}

function checkJsonDepth(text: string): void {
  if (jsonDepth(text, bodyLimits.maxDepth) > bodyLimits.maxDepth) {
    throw badRequest(`the body of the request could not be decoded: exceeded max depth of ${bodyLimits.maxDepth}`);
  }
}

/** kube refuses a JSON patch of more operations than it will apply. */
export function checkJsonPatchSize(patch: unknown): void {
  if (Array.isArray(patch) && patch.length > bodyLimits.maxJsonPatchOperations) {
    throw new ApiError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${bodyLimits.maxJsonPatchOperations}, got ${patch.length}`,
    );
  }
}

async function parseYamlDocument(text: string): Promise<unknown> {
  // JSON is YAML, and what clients send as apply configurations: decode it here, without the worker.
  const json = text.trimStart().startsWith('{') ? jsonOrUndefined(text) : undefined;
  if (json !== undefined) {
    checkJsonDepth(text);
    const repeated = duplicateFields(text);
    if (repeated.length > 0) throw badRequest(`error decoding YAML: ${repeated.map((path) => `key "${path}" already set in map`).join(', ')}`);
    return json;
  }
  const decoded = await decodeYamlOffThread(text, { maxDepth: bodyLimits.maxDepth, maxOutputBytes: bodyLimits.maxBodyBytes });
  // Repeated keys are errors, as in kube's strict decoding.
  if (decoded.duplicates.length > 0) throw badRequest(`error decoding YAML: yaml: unmarshal errors:\n  ${decoded.duplicates.join('\n  ')}`);
  return JSON.parse(decoded.json) as unknown;
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
