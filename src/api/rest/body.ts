/**
 * Request bodies: read raw, then decoded by media type, with the bounds
 * kube-apiserver puts on parse work (k8s.io/apiserver endpoints/handlers:
 * limitedReadBody, maxJSONPatchOperations; k8s.io/apimachinery util/json
 * maxDepth; go.yaml.in/yaml/v2 alias and depth limits). Only what a CRD
 * endpoint accepts is accepted. Every step is linear in the body's size and
 * no request holds the event loop for long: YAML, and JSON past a few
 * kilobytes, go to a worker thread, which also prunes unknown fields as
 * kube does for a CRD, so this thread parses only what is stored.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest, unsupportedMediaType } from '../status.js';
import { parseContentType } from '../negotiation.js';
import { ACCEPTED_MEDIA_TYPES } from './output-format.js';
import { strictErrors, unknownFieldError, type StrictErrors } from './body-worker.js';
import { duplicateFields, firstOverflowingNumber, invalidUnicodeEscape, jsonDepth } from './json-scan.js';
import { pruneUnknownFields, type PruneSchema } from './prune.js';
import { decodeOffThread, type DecodeOptions } from './body-decoder.js';

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
  /** JSON bodies past this size are parsed off the event loop (JSON.parse of 64 KiB: ~1 ms; of 2 MiB: up to 300 ms). */
  maxJsonBytesOnEventLoop: 64 * 1024,
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
  return (await readBodyBytes(req)).toString('utf8');
}

/** The body as sent, for decoders that refuse what is not UTF-8 (YAML) rather than replace it. */
export async function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > bodyLimits.maxBodyBytes) throw entityTooLarge(`limit is ${bodyLimits.maxBodyBytes}`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
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

/**
 * A decoded body and what kube's strict decoding says about it: repeated
 * keys, which decoding loses, and, when decoded against the kind's schema,
 * the unknown fields pruned from it. The caller applies fieldValidation
 * (refuse under Strict, warn under Warn, nothing under Ignore).
 */
export interface DecodedDocument {
  readonly value: unknown;
  /** Repeated keys (JSON: `duplicate field "a"` each; YAML: goyaml's one error). */
  readonly duplicates: StrictErrors;
  /** `unknown field "spec.x"` for each field pruned, sorted. */
  readonly unknownFields: StrictErrors;
  readonly firstUnknownField: string | undefined;
}

export interface PruneOptions {
  /** The kind's object schema: unknown fields are pruned and reported. */
  readonly schema?: PruneSchema;
  /** The body is a merge patch: a null under an unknown field deletes nothing and is dropped silently. */
  readonly mergePatch?: boolean;
}

/** A JSON (or YAML, which kube also accepts for objects) object body. */
export async function decodeObject(text: string, type: string, options: PruneOptions = {}): Promise<DecodedDocument> {
  // kube reads a body without Content-Type as JSON.
  if (type === 'application/json' || type === '') return parseJsonDocument(text, options);
  if (type === 'application/yaml') return parseYamlDocument(text, options);
  throw unsupportedMediaType(ACCEPTED_MEDIA_TYPES);
}

/**
 * A JSON body (an object or a merge patch), pruned as `options` say: small
 * ones here, large ones (parse, depth, repeated keys, pruning) in the worker.
 */
export async function parseJsonDocument(text: string, options: PruneOptions): Promise<DecodedDocument> {
  if (text.length > bodyLimits.maxJsonBytesOnEventLoop) return decodeInWorker(text, 'json', options);
  const value = parseJson(text);
  return pruneHere(value, duplicateFields(text).map((path) => `duplicate field "${path}"`), options);
}

function pruneHere(parsed: unknown, duplicates: readonly string[], options: PruneOptions): DecodedDocument {
  const { value, unknownFields } =
    options.schema === undefined ? { value: parsed, unknownFields: [] } : pruneUnknownFields(parsed as JsonDocument, options.schema, options.mergePatch === true);
  return { value, duplicates: strictErrors(duplicates), unknownFields: strictErrors(unknownFields.map(unknownFieldError)), firstUnknownField: unknownFields[0] };
}

type JsonDocument = Parameters<typeof pruneUnknownFields>[0];

async function decodeInWorker(text: string, format: DecodeOptions['format'], options: PruneOptions): Promise<DecodedDocument> {
  const decoded = await decodeOffThread(text, { format, maxDepth: bodyLimits.maxDepth, maxOutputBytes: bodyLimits.maxBodyBytes, ...options });
  return { value: JSON.parse(decoded.json) as unknown, duplicates: decoded.duplicates, unknownFields: decoded.unknownFields, firstUnknownField: decoded.firstUnknownField };
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

async function parseYamlDocument(text: string, options: PruneOptions): Promise<DecodedDocument> {
  // JSON is YAML, and what clients send as apply configurations: small JSON is parsed here, unless it repeats
  // a key or escapes a surrogate (rare): goyaml's complaints name lines, which only the YAML decoder knows;
  // nor a number float64 cannot hold, which goyaml resolves as a string.
  const startsAsJson = text.trimStart().startsWith('{');
  if (startsAsJson && text.length <= bodyLimits.maxJsonBytesOnEventLoop && readsAsJson(text)) {
    const json = jsonOrUndefined(text);
    if (json !== undefined) {
      checkJsonDepth(text);
      return pruneHere(json, [], options);
    }
  }
  return decodeInWorker(text, startsAsJson ? 'json-or-yaml' : 'yaml', options);
}

/** Whether YAML that looks like JSON decodes as JSON.parse decodes it (see parseYamlDocument). */
function readsAsJson(text: string): boolean {
  return duplicateFields(text).length === 0 && invalidUnicodeEscape(text) === undefined && firstOverflowingNumber(text) === undefined;
}

/** goyaml's prefix for its list of unmarshal errors; kube strips it to make one warning per line. */
const yamlUnmarshalErrors = 'yaml: unmarshal errors:\n';

/**
 * The Warning texts kube sends for strict-decoding errors under
 * fieldValidation=Warn (k8s.io/apiserver endpoints/handlers rest.go
 * addStrictDecodingWarnings, parseYAMLWarnings): one per line of a YAML
 * error list, the error itself otherwise.
 */
export function strictDecodingWarnings(errors: readonly string[]): string[] {
  return errors.flatMap((error) => {
    const prefix = [yamlUnmarshalErrors, `error converting YAML to JSON: ${yamlUnmarshalErrors}`].find((p) => error.startsWith(p));
    const list = prefix === undefined ? undefined : error.slice(prefix.length);
    return list === undefined ? [error] : list.split('\n').map((line) => line.trim());
  });
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
