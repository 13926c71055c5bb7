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
import { parseMediaRange } from '../negotiation.js';
import { duplicateFields, jsonDepth } from './json-scan.js';
import { pruneUnknownFields, type PruneSchema } from './body-worker.js';
import { decodeOffThread, type DecodeOptions } from './body-decoder.js';

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

export function mediaType(req: IncomingMessage): string {
  const range = parseMediaRange(req.headers['content-type'] ?? '');
  return range === undefined ? '' : `${range.type}/${range.subtype}`;
}

/**
 * A decoded body and what kube's strict decoding says about it: repeated
 * keys, which decoding loses, and, when decoded against the kind's schema,
 * the unknown fields pruned from it. The caller applies fieldValidation
 * (refuse under Strict, warn under Warn, nothing under Ignore).
 */
export interface DecodedDocument {
  readonly value: unknown;
  /** kube's strict-decoding errors for repeated keys (JSON: `duplicate field "a"` each; YAML: goyaml's one error). */
  readonly duplicates: readonly string[];
  /** Paths of the fields pruned as unknown, sorted (`spec.list[0].x`). */
  readonly unknownFields: readonly string[];
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
  if (type === 'application/json' || type === '') {
    const decoded = await parseJsonDocument(text, options);
    return { ...decoded, duplicates: duplicateFields(text).map((path) => `duplicate field "${path}"`) };
  }
  if (type === 'application/yaml' || type === patchTypes.apply) return parseYamlDocument(text, options);
  throw unsupportedMediaType(['application/json', 'application/yaml']);
}

/** A JSON body (a merge patch, or an object), pruned as `options` say: small ones here, large ones in the worker. */
export async function parseJsonDocument(text: string, options: PruneOptions): Promise<DecodedDocument> {
  if (text.length <= bodyLimits.maxJsonBytesOnEventLoop) return pruneHere(parseJson(text), options);
  checkJsonDepth(text);
  return decodeInWorker(text, 'json', options);
}

function pruneHere(value: unknown, options: PruneOptions): DecodedDocument {
  if (options.schema === undefined) return { value, duplicates: [], unknownFields: [] };
  return { ...pruneUnknownFields(value as Parameters<typeof pruneUnknownFields>[0], options.schema, options.mergePatch === true), duplicates: [] };
}

async function decodeInWorker(text: string, format: DecodeOptions['format'], options: PruneOptions): Promise<DecodedDocument> {
  const decoded = await decodeOffThread(text, { format, maxDepth: bodyLimits.maxDepth, maxOutputBytes: bodyLimits.maxBodyBytes, ...options });
  const duplicates = decoded.duplicates.length === 0 ? [] : [`${yamlUnmarshalErrors}${decoded.duplicates.map((d) => `  ${d}`).join('\n')}`];
  return { value: JSON.parse(decoded.json) as unknown, duplicates, unknownFields: decoded.unknownFields };
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
  // JSON is YAML, and what clients send as apply configurations: it is parsed as JSON (small, here), unless it
  // repeats a key (rare): goyaml's complaint names lines, which only the YAML decoder knows.
  const probablyJson = text.trimStart().startsWith('{') && duplicateFields(text).length === 0;
  const json = probablyJson && text.length <= bodyLimits.maxJsonBytesOnEventLoop ? jsonOrUndefined(text) : undefined;
  if (json !== undefined) {
    checkJsonDepth(text);
    return pruneHere(json, options);
  }
  if (probablyJson) checkJsonDepth(text);
  return decodeInWorker(text, probablyJson ? 'json-or-yaml' : 'yaml', options);
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
