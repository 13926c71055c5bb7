/**
 * Decodes one request body off the event loop and prunes the fields its
 * kind's schema does not know, so the event loop only ever parses what
 * will be stored: a body with 100,000 unknown fields costs this thread
 * hundreds of milliseconds and the main thread a few.
 *
 * Pruning is kube's (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/
 * pruning/algorithm.go): the root is an embedded resource (apiVersion, kind,
 * metadata are left to ObjectMeta decoding), x-kubernetes-preserve-unknown-fields
 * keeps what it covers, paths are reported sorted, `a.b[0].c`.
 *
 * YAML is decoded to JSON text with
 * the bounds of go.yaml.in/yaml/v2 as sigs.k8s.io/yaml uses it in
 * kube-apiserver: alias expansion limited by the ratio rule of
 * decode.go (allowedAliasRatio), an anchor may not contain its own alias
 * ("anchor 'a' value contains itself"), nesting bounded. The conversion to
 * JSON is linear (the yaml package's own toJS resolves each alias by
 * scanning the document, which is quadratic in the number of aliases).
 *
 * Runs as a worker thread: no imports from this project (it is loaded as
 * is, compiled or as TypeScript source in tests).
 */
import { parentPort } from 'node:worker_threads';
import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Alias, type Node, type Pair } from 'yaml';

/** The part of a structural schema pruning reads. */
export interface PruneSchema {
  readonly properties?: Readonly<Record<string, PruneSchema>>;
  readonly additionalProperties?: boolean | PruneSchema;
  readonly items?: PruneSchema;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
}

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

export type BodyFailure = 'invalid' | 'tooLarge';

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

// No parameter properties here or below: Node's type stripping runs this file as is in tests.
class BodyError extends Error {
  readonly failure: BodyFailure;
  constructor(failure: BodyFailure, message: string) {
    super(message);
    this.failure = failure;
  }
}

// go.yaml.in/yaml/v2 decode.go: above 100 aliased and 1000 decoded nodes, the share of aliased ones is bounded.
const aliasRatioRangeLow = 400_000;
const aliasRatioRangeHigh = 4_000_000;

function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= aliasRatioRangeLow) return 0.99;
  if (decodeCount >= aliasRatioRangeHigh) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - aliasRatioRangeLow) / (aliasRatioRangeHigh - aliasRatioRangeLow));
}

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

class Converter {
  private decodeCount = 1; // the document node
  private aliasCount = 0;
  private readonly anchors = new Map<string, Node>();
  private readonly converted = new Map<Node, { value: JsonValue; size: number }>();
  private readonly converting = new Set<Node>();
  private readonly lineStarts: number[] = [0];
  private readonly maxDepth: number;
  /** goyaml's strict-decoding complaints about repeated keys. */
  readonly duplicates: string[] = [];

  constructor(text: string, maxDepth: number) {
    this.maxDepth = maxDepth;
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) this.lineStarts.push(index + 1);
  }

  /** Converts `node`, counting its decoded size (nodes, aliases expanded) as goyaml counts it. */
  convert(node: Node | null, depth: number, inAlias: boolean): JsonValue {
    return this.convertSized(node, depth, inAlias).value;
  }

  private count(size: number, aliased: boolean): void {
    this.decodeCount += size;
    if (aliased) this.aliasCount += size;
    if (this.aliasCount > 100 && this.decodeCount > 1000 && this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)) {
      throw new BodyError('invalid', 'error decoding YAML: yaml: document contains excessive aliasing');
    }
  }

  private convertSized(node: Node | null, depth: number, inAlias: boolean): { value: JsonValue; size: number } {
    if (node === null) {
      this.count(1, inAlias);
      return { value: null, size: 1 };
    }
    if (node.anchor !== undefined && node.anchor !== '') this.anchors.set(node.anchor, node);
    if (isAlias(node)) return this.convertAlias(node, depth, inAlias);
    const done = this.converted.get(node);
    if (done !== undefined) {
      // Already converted once (an alias target): the same value, counted again as goyaml expands it.
      this.count(done.size, inAlias);
      return done;
    }
    if ((isMap(node) || isSeq(node)) && depth > this.maxDepth) throw new BodyError('invalid', `error decoding YAML: yaml: exceeded max depth of ${this.maxDepth}`);
    this.converting.add(node);
    const before = this.decodeCount;
    this.count(1, inAlias);
    let value: JsonValue;
    if (isMap(node)) value = this.convertPairs(node.items as Pair<Node | null, Node | null>[], depth, inAlias);
    // The items of a `!!omap` or `!!pairs` sequence are pairs, each a one-key map to goyaml.
    else if (isSeq(node)) value = node.items.map((item) => (isPair(item) ? this.convertPairs([item as Pair<Node | null, Node | null>], depth + 1, inAlias) : this.convert(item as Node | null, depth + 1, inAlias)));
    else if (isScalar(node)) value = scalarValue(node.value, node.source ?? String(node.value));
    else throw new BodyError('invalid', 'error decoding YAML: yaml: unsupported node');
    this.converting.delete(node);
    const result = { value, size: this.decodeCount - before };
    if (node.anchor !== undefined && node.anchor !== '') this.converted.set(node, result);
    return result;
  }

  private convertAlias(alias: Alias, depth: number, inAlias: boolean): { value: JsonValue; size: number } {
    this.count(1, inAlias);
    const target = this.anchors.get(alias.source);
    if (target === undefined) throw new BodyError('invalid', `error decoding YAML: yaml: unknown anchor '${alias.source}' referenced`);
    if (this.converting.has(target)) throw new BodyError('invalid', `error decoding YAML: yaml: anchor '${alias.source}' value contains itself`);
    const result = this.convertSized(target, depth, true);
    return { value: result.value, size: result.size + 1 };
  }

  private convertPairs(pairs: readonly Pair<Node | null, Node | null>[], depth: number, inAlias: boolean): JsonValue {
    const object: Record<string, JsonValue> = {};
    const seen = new Set<string>();
    for (const pair of pairs) {
      if (isScalar(pair.key) && typeof pair.key.value === 'symbol') {
        this.merge(object, pair.value, depth, inAlias);
        continue;
      }
      const key = keyString(this.convert(pair.key, depth + 1, inAlias));
      if (seen.has(key)) this.duplicates.push(`line ${this.lineOf(pair.key?.range?.[0] ?? 0)}: key ${JSON.stringify(key)} already set in map`);
      seen.add(key);
      object[key] = this.convert(pair.value, depth + 1, inAlias);
    }
    return object;
  }

  /** YAML 1.1 merge key (`<<: *base` or `<<: [*a, *b]`): earlier sources win, as in goyaml's merge. */
  private merge(into: Record<string, JsonValue>, source: Node | null, depth: number, inAlias: boolean): void {
    const sources = isSeq(source) ? [...(source.items as (Node | null)[])].reverse() : [source];
    for (const item of sources) {
      const value = this.convert(item, depth + 1, inAlias);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new BodyError('invalid', 'error decoding YAML: yaml: map merge requires map or sequence of maps as the value');
      }
      Object.assign(into, value);
    }
  }

  /** The 1-based line of a source offset. */
  private lineOf(offset: number): number {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.lineStarts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }
}


/** goyaml decodes timestamps and binary into interface{} as their text; numbers, booleans and null as such. */
function scalarValue(value: unknown, source: string): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : source;
  if (typeof value === 'bigint') return Number(value);
  return source;
}

/** sigs.k8s.io/yaml turns scalar keys into JSON strings and refuses others. */
function keyString(key: JsonValue): string {
  if (key === null) return 'null';
  if (typeof key === 'object') throw new BodyError('invalid', 'error decoding YAML: error converting YAML to JSON: yaml: invalid map key');
  return String(key);
}

export function decodeBody(request: BodyRequest): BodyAnswer {
  try {
    const json = request.format === 'yaml' ? undefined : jsonDocument(request.text, request.maxDepth, request.format === 'json');
    const decoded = json ?? decodeYaml(request.text, request.maxDepth);
    const { value, unknownFields } = request.schema === undefined ? { value: decoded.value, unknownFields: [] } : pruneUnknownFields(decoded.value, request.schema, request.mergePatch === true);
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
  if (!certain && duplicates.length > 0) return undefined;
  return { value, duplicates: duplicates.map((path) => `duplicate field "${path}"`) };
}

const jsonFailure = 'the body of the request could not be decoded: ';

function decodeYaml(text: string, maxDepth: number): { value: JsonValue; duplicates: string[] } {
  const document = parseDocument(text, { version: '1.1', uniqueKeys: false, keepSourceTokens: false });
  // goyaml's Unmarshal reads the first document only: what follows it is not an error.
  const error = document.errors.find((e) => e.code !== 'MULTIPLE_DOCS');
  if (error !== undefined) throw new BodyError('invalid', `${yamlFailure}yaml: line ${error.linePos?.[0].line ?? 0}: ${error.message.split('\n')[0] ?? ''}`);
  const converter = new Converter(text, maxDepth);
  const value = converter.convert(document.contents, 1, false);
  // goyaml reports every repeated key in one error, a line each.
  const duplicates = converter.duplicates.length === 0 ? [] : [`yaml: unmarshal errors:\n${converter.duplicates.map((d) => `  ${d}`).join('\n')}`];
  return { value, duplicates };
}

const yamlFailure = 'error decoding YAML: ';

/*
 * Linear, non-recursive scans of JSON text that JSON.parse has already
 * accepted: nesting depth (kube bounds it at 10000 in
 * k8s.io/apimachinery/pkg/util/json and Go's encoding/json scanner) and keys
 * repeated within one object (kube's strict decoding, sigs.k8s.io/json).
 * Iterative on purpose: the text may nest deeper than the stack allows.
 */

const quote = 0x22;
const backslash = 0x5c;

/** The deepest nesting of objects and arrays, or `limit + 1` as soon as the text nests deeper than `limit`. */
export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let position = 0; position < text.length; position++) {
    const code = text.charCodeAt(position);
    if (code === quote) {
      position = stringEnd(text, position);
    } else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (depth > limit) return depth;
    } else if (code === 0x7d || code === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

/** The position of the closing quote of the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let position = start + 1;
  for (;;) {
    const code = text.charCodeAt(position);
    if (code === quote || Number.isNaN(code)) return position;
    position += code === backslash ? 2 : 1;
  }
}

interface OpenContainer {
  /** Where it sits in its parent: a key or an index; undefined at the top. */
  readonly segment: string | number | undefined;
  /** Keys seen so far (objects), undefined for arrays. */
  readonly keys: Set<string> | undefined;
  index: number;
  /** An object's key just read, waiting for its value. */
  pendingKey: string | undefined;
}

/**
 * Paths of keys that repeat within one JSON object (`spec.poweredOn`,
 * `spec.list[0].x`), which JSON.parse silently collapses: kube's strict
 * decoding reports them (error under Strict, warning under Warn).
 * Expects text that JSON.parse has already accepted. Paths are only built
 * for the keys reported.
 */
export function duplicateFields(text: string): string[] {
  const duplicates: string[] = [];
  walkJson(text, {
    key: (open, parent, key) => {
      if (parent.has(key)) duplicates.push(pathOf(open, key));
      parent.add(key);
    },
  });
  return duplicates;
}

/** A number literal and where it sits: the segments of its containers, then its own key or index. */
export interface NumberLiteral {
  readonly literal: string;
  readonly path: readonly (string | number)[];
}

/**
 * The first number, in document order, too large for a float64 (`1e400`),
 * which JSON.parse turns into Infinity but Go's encoding/json refuses when
 * decoding into interface{} (`cannot unmarshal number 1e400 into Go value of
 * type float64`). Expects text that JSON.parse has already accepted.
 */
export function firstOverflowingNumber(text: string): NumberLiteral | undefined {
  let found: NumberLiteral | undefined;
  walkJson(text, {
    literal: (open, segment, literal) => {
      const first = literal.charCodeAt(0);
      if (!(first === 0x2d || (first >= 0x30 && first <= 0x39)) || Number.isFinite(Number(literal))) return false;
      const containers = open.map((container) => container.segment).filter((s): s is string | number => s !== undefined);
      found = { literal, path: segment === undefined ? containers : [...containers, segment] };
      return true;
    },
  });
  return found;
}

interface JsonVisitor {
  /** An object's key, with the keys its object had before it. */
  readonly key?: (open: readonly OpenContainer[], seen: Set<string>, key: string) => void;
  /** A number, true, false or null, and where it sits; true stops the walk. */
  readonly literal?: (open: readonly OpenContainer[], segment: string | number | undefined, literal: string) => boolean;
}

/** One linear, non-recursive pass over JSON text JSON.parse accepted, tracking where each value sits. */
function walkJson(text: string, visitor: JsonVisitor): void {
  const open: OpenContainer[] = [];
  // Where a value starting at the current position sits in its parent.
  const nextSegment = (): string | number | undefined => {
    const parent = open.at(-1);
    if (parent === undefined) return undefined;
    return parent.keys === undefined ? parent.index++ : parent.pendingKey;
  };
  for (let position = 0; position < text.length; position++) {
    const code = text.charCodeAt(position);
    if (code === 0x7b || code === 0x5b) {
      open.push({ segment: nextSegment(), keys: code === 0x7b ? new Set() : undefined, index: 0, pendingKey: undefined });
    } else if (code === 0x7d || code === 0x5d) {
      open.pop();
    } else if (code === quote) {
      const end = stringEnd(text, position);
      const parent = open.at(-1);
      if (parent?.keys !== undefined && parent.pendingKey === undefined) {
        const raw = text.slice(position + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        visitor.key?.(open, parent.keys, key);
        parent.pendingKey = key;
      } else {
        nextSegment();
      }
      position = end;
    } else if (code === 0x2c) {
      const parent = open.at(-1);
      if (parent !== undefined) parent.pendingKey = undefined;
    } else if (code !== 0x3a && code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) {
      const segment = nextSegment();
      const start = position;
      while (position + 1 < text.length && !',]} \t\r\n'.includes(text.charAt(position + 1))) position++;
      if (visitor.literal?.(open, segment, text.slice(start, position + 1)) === true) return;
    }
  }
}

/** kube's field path of `key` in the innermost open object: `spec.list[0].x`. */
function pathOf(open: readonly OpenContainer[], key: string): string {
  let path = '';
  for (const container of open) {
    const segment = container.segment;
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (segment !== undefined) path += path === '' ? segment : `.${segment}`;
  }
  return path === '' ? key : `${path}.${key}`;
}

const metaFields = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * `value` (the object a body decodes to) without the fields kube's pruning
 * removes, and their paths sorted as Go's sort.Strings sorts them. A copy:
 * YAML aliases share values, which may sit under different schemas. What
 * is not an object is no object of the kind, and left to the caller.
 */
export function pruneUnknownFields(value: JsonValue, schema: PruneSchema, mergePatch = false): { value: JsonValue; unknownFields: string[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { value, unknownFields: [] };
  const unknownFields: string[] = [];
  const result = prune(value, { ...schema, 'x-kubernetes-embedded-resource': true }, '', { unknownFields, mergePatch });
  // Byte order, as Go compares strings (UTF-16 order differs beyond the BMP).
  unknownFields.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return { value: result, unknownFields };
}

interface Pruning {
  readonly unknownFields: string[];
  readonly mergePatch: boolean;
}

function prune(value: JsonValue, schema: PruneSchema | undefined, path: string, pruning: Pruning): JsonValue {
  const preserve = schema?.['x-kubernetes-preserve-unknown-fields'] === true;
  if (Array.isArray(value)) {
    // Items of a preserved list are preserved too (kube's skipPrune).
    const items = preserve ? (schema.items === undefined ? undefined : { ...schema.items, 'x-kubernetes-preserve-unknown-fields': true }) : schema?.items;
    if (preserve && items === undefined) return value;
    return value.map((item, index) => prune(item, items, `${path}[${index}]`, pruning));
  }
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, JsonValue> = {};
  for (const [key, child] of Object.entries(value)) {
    const childPath = path === '' ? key : `${path}.${key}`;
    const known = schema?.properties?.[key] ?? additional(schema);
    if (schema?.['x-kubernetes-embedded-resource'] === true && metaFields.has(key)) result[key] = child;
    else if (known !== undefined) result[key] = prune(child, known, childPath, pruning);
    else if (preserve) result[key] = child;
    else if (!(pruning.mergePatch && child === null)) pruning.unknownFields.push(childPath);
  }
  return result;
}

/** The schema of a map's values; `true` keeps whatever they hold. */
function additional(schema: PruneSchema | undefined): PruneSchema | undefined {
  const values = schema?.additionalProperties;
  if (values === undefined || values === false) return undefined;
  return values === true ? { 'x-kubernetes-preserve-unknown-fields': true } : values;
}

parentPort?.on('message', (request: BodyRequest) => parentPort?.postMessage(decodeBody(request)));
