/**
 * Decodes one request body off the event loop and prunes the fields its
 * kind's schema does not know, so the event loop only ever parses what
 * will be stored: a body with 100,000 unknown fields costs this thread
 * hundreds of milliseconds and the main thread a few. YAML: yaml-events.ts;
 * JSON's checks: json-scan.ts; pruning: prune.ts.
 *
 * Runs as a worker thread, loaded as is: compiled, or as TypeScript source
 * in tests, where Node strips the types but resolves no `./x.js` to `x.ts`.
 * So this module and the ones it imports import each other with `.ts`
 * specifiers (tsc rewrites them, rewriteRelativeImportExtensions), and
 * nothing else of this project.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { BodyError, type BodyFailure } from './body-error.ts';
import type { JsonValue } from './decoded-value.ts';
import { duplicateFields, firstOverflowingNumber, invalidUnicodeEscape, jsonDepth } from './json-scan.ts';
import { plain, pruneUnknownFields, type PruneSchema } from './prune.ts';
import { decodeYaml } from './yaml-events.ts';

export interface BodyRequest {
  readonly id: number;
  /** json-or-yaml: YAML that is probably JSON (the caller saw no repeated key), parsed as JSON when it is. */
  readonly format: 'json' | 'yaml' | 'json-or-yaml';
  readonly text: string;
  readonly maxDepth: number;
  readonly maxOutputBytes: number;
  /** The kind's object schema: unknown fields are pruned and reported. */
  readonly schema?: PruneSchema;
  /** A merge patch: a null under an unknown field deletes nothing and is dropped silently. */
  readonly mergePatch?: boolean;
}

/** The workerData body-decoder.ts starts this module with: only then does it serve requests. */
export const bodyDecoderWorkerData = { bodyDecoder: true } as const;

/**
 * Strict-decoding errors of one kind (repeated keys, unknown fields), in
 * kube's wording: all of them as the one message a Strict refusal carries,
 * and the first few, as many as kube's warning recorder could ever send,
 * so 100,000 of them cross to the event loop as one string.
 */
export interface StrictErrors {
  readonly count: number;
  readonly message: string;
  readonly first: readonly string[];
}

export type BodyAnswer =
  | {
      readonly id: number;
      readonly json: string;
      readonly duplicates: StrictErrors;
      readonly unknownFields: StrictErrors;
      /** The first unknown field's path, sorted (`spec.k0`). */
      readonly firstUnknownField: string | undefined;
    }
  | { readonly id: number; readonly failure: BodyFailure; readonly message: string };

/** kube's recorder writes at most 4 KiB of warning text, a rune or more each: more warnings than this are never sent. */
export const maxReported = 4096;

export function strictErrors(texts: readonly string[]): StrictErrors {
  return { count: texts.length, message: texts.join(', '), first: texts.slice(0, maxReported) };
}

export const unknownFieldError = (path: string): string => `unknown field "${path}"`;

export function decodeBody(request: BodyRequest): BodyAnswer {
  try {
    const json = request.format === 'yaml' ? undefined : jsonDocument(request.text, request.maxDepth, request.format === 'json');
    const decoded = json ?? decodeYaml(request.text, request.maxDepth);
    const { value, unknownFields } = request.schema === undefined ? { value: plain(decoded.value), unknownFields: [] } : pruneUnknownFields(decoded.value, request.schema, request.mergePatch === true);
    const text = JSON.stringify(value);
    if (text.length > request.maxOutputBytes) {
      throw new BodyError('tooLarge', `Request entity too large: limit is ${request.maxOutputBytes}`);
    }
    return { id: request.id, json: text, duplicates: strictErrors(decoded.duplicates), unknownFields: strictErrors(unknownFields.map(unknownFieldError)), firstUnknownField: unknownFields[0] };
  } catch (error) {
    if (error instanceof BodyError) return { id: request.id, failure: error.failure, message: error.message };
    // Only nesting can exhaust the parser's stack.
    if (error instanceof RangeError) return { id: request.id, failure: 'invalid', message: `error decoding YAML: yaml: exceeded max depth of ${request.maxDepth}` };
    return { id: request.id, failure: 'invalid', message: `error decoding YAML: yaml: ${(error as Error).message}` };
  }
}

/**
 * A JSON body as the event loop would decode it (parse, then depth, then
 * repeated keys), or, when it is only probably JSON (YAML that starts with
 * `{`), undefined unless it parses and repeats no key: goyaml's complaint
 * names lines, which only the YAML decoder knows.
 */
function jsonDocument(text: string, maxDepth: number, certain: boolean): { value: JsonValue; duplicates: string[] } | undefined {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    if (!certain) return undefined;
    throw new BodyError('invalid', `${jsonFailure}${(error as Error).message}`);
  }
  if (jsonDepth(text, maxDepth) > maxDepth) throw new BodyError('invalid', `${jsonFailure}exceeded max depth of ${maxDepth}`);
  const duplicates = duplicateFields(text);
  // YAML reads JSON's strings as double-quoted scalars, whose escapes goyaml checks more strictly than JSON,
  // and a number float64 cannot hold as a string.
  if (!certain && (duplicates.length > 0 || invalidUnicodeEscape(text) !== undefined || firstOverflowingNumber(text) !== undefined)) return undefined;
  return { value, duplicates: duplicates.map((path) => `duplicate field "${path}"`) };
}

const jsonFailure = 'the body of the request could not be decoded: ';

/**
 * This thread runs at a lower priority (nice 10) than the event loop and
 * kube-apiserver: on a busy machine a hostile body waits for a CPU, not
 * every other request. Linux names a thread by its id in /proc/thread-self;
 * elsewhere the thread keeps the process's priority.
 */
function yieldToTheEventLoop(): void {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').at(-1)), 10);
  } catch {
    // Not Linux, or not allowed: decoding still runs off the event loop.
  }
}

if ((workerData as typeof bodyDecoderWorkerData | undefined)?.bodyDecoder === true) {
  yieldToTheEventLoop();
  parentPort?.on('message', (request: BodyRequest) => parentPort?.postMessage(decodeBody(request)));
}
