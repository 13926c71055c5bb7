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
 * YAML is decoded as go.yaml.in/yaml/v2 decodes it for sigs.k8s.io/yaml in
 * kube-apiserver (decode.go, resolve.go): alias expansion limited by the
 * ratio rule (allowedAliasRatio), an anchor may not contain its own alias
 * ("anchor 'a' value contains itself"), nesting bounded, explicit tags
 * resolved as resolve() does, repeated keys as UnmarshalStrict reports them.
 * js-yaml's event parser reads the text (a flat list of events with source
 * offsets: 2 MB with 100,000 keys in ~100 ms, a tenth of what the yaml
 * package's document model costs); one loop turns the events into values,
 * mappings as Maps, aliases sharing their anchor's value, so every step is
 * linear. Plain scalars resolve with the yaml package's YAML 1.1 tags.
 *
 * Runs as a worker thread: no imports from this project (it is loaded as
 * is, compiled or as TypeScript source in tests).
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, YAMLException, type AliasEvent, type Event, type MappingEvent, type ScalarEvent, type SequenceEvent } from 'js-yaml';
import { Document, isScalar, type ScalarTag } from 'yaml';

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

// No parameter properties here or below: Node's type stripping runs this file as is in tests.
class BodyError extends Error {
  readonly failure: BodyFailure;
  constructor(failure: BodyFailure, message: string) {
    super(message);
    this.failure = failure;
  }
}

const yamlFailure = 'error decoding YAML: ';

// go.yaml.in/yaml/v2 decode.go: above 100 aliased and 1000 decoded nodes, the share of aliased ones is bounded.
const aliasRatioRangeLow = 400_000;
const aliasRatioRangeHigh = 4_000_000;

function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= aliasRatioRangeLow) return 0.99;
  if (decodeCount >= aliasRatioRangeHigh) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - aliasRatioRangeLow) / (aliasRatioRangeHigh - aliasRatioRangeLow));
}

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A decoded body: JSON's values, or YAML's, whose mappings are Maps
 * (inserting and walking 100,000 keys costs a Map a fraction of what it
 * costs an object).
 */
export type DecodedValue = null | boolean | number | string | DecodedValue[] | DecodedMap | { [key: string]: DecodedValue };
type DecodedMap = Map<string, DecodedValue>;

/** A decoded value and its size as goyaml counts decoded nodes (aliases expanded). */
interface Sized {
  readonly value: DecodedValue;
  readonly size: number;
}

/**
 * A collection being decoded. `merge` is the sequence under a `<<` key: its
 * items are merged into the mapping, and it counts as no node.
 */
type Frame = { readonly depth: number; readonly anchor: string | undefined; readonly before: number; readonly start: number } & (
  | { readonly kind: 'sequence' | 'merge'; readonly value: DecodedValue[] }
  | { readonly kind: 'mapping'; readonly value: DecodedMap; key: PendingKey | undefined; readonly lines: Map<string, number> | undefined }
);

/** A mapping's key whose value comes next, or `<<`. */
type PendingKey = { readonly name: string; readonly offset: number } | typeof mergeKey;

const mergeKey = Symbol('merge');
/** An anchor whose collection is still being decoded: an alias to it is goyaml's "contains itself". */
const open = Symbol('open');

/**
 * Builds the value of a YAML document from js-yaml's event stream, in one
 * pass without recursion, as goyaml v2 decodes into interface{}: nodes
 * counted for the alias ratio, aliases sharing their anchor's value,
 * repeated keys reported with their value's line as UnmarshalStrict
 * reports them, YAML 1.1 merge keys. goyaml merges a map by setting its
 * keys one by one, so a merged key set before, or set again after, is a
 * repeated key too: the lines of the keys of maps that can be merged
 * (anchored ones, those under `<<`) are kept for that.
 */
class EventDecoder {
  private decodeCount = 1; // the document node
  private aliasCount = 0;
  private readonly anchors = new Map<string, Sized | typeof open>();
  private readonly frames: Frame[] = [];
  private readonly mergeableLines = new WeakMap<DecodedMap, Map<string, number>>();
  private readonly lineStarts: number[] = [0];
  private readonly text: string;
  private readonly maxDepth: number;
  private root: DecodedValue = null;
  /** goyaml's strict-decoding complaints about repeated keys. */
  readonly duplicates: string[] = [];

  constructor(text: string, maxDepth: number) {
    this.text = text;
    this.maxDepth = maxDepth;
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) this.lineStarts.push(index + 1);
  }

  /** The first document's value. */
  decode(events: readonly Event[]): DecodedValue {
    let documents = 0;
    for (const event of events) {
      if (event.type === EVENT_ID.DOCUMENT) {
        if (++documents > 1) break;
      } else if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) {
        this.openCollection(event);
      } else if (event.type === EVENT_ID.SCALAR) {
        this.scalar(event);
      } else if (event.type === EVENT_ID.ALIAS) {
        this.alias(event);
      } else {
        this.closeCollection();
      }
    }
    return this.root;
  }

  private count(size: number, aliased: boolean): void {
    this.decodeCount += size;
    if (aliased) this.aliasCount += size;
    if (this.aliasCount > 100 && this.decodeCount > 1000 && this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)) {
      throw new BodyError('invalid', `${yamlFailure}yaml: document contains excessive aliasing`);
    }
  }

  private openCollection(event: MappingEvent | SequenceEvent): void {
    const parent = this.frames.at(-1);
    const merging = parent?.kind === 'mapping' && parent.key === mergeKey && event.type === EVENT_ID.SEQUENCE;
    // Maps merged from a sequence sit where the mapping's values sit.
    const depth = parent === undefined ? 1 : merging ? parent.depth : parent.depth + 1;
    if (depth > this.maxDepth) throw new BodyError('invalid', `${yamlFailure}yaml: exceeded max depth of ${this.maxDepth}`);
    const before = this.decodeCount;
    if (!merging) this.count(1, false);
    const anchor = merging || event.anchorStart < 0 ? undefined : this.text.slice(event.anchorStart, event.anchorEnd);
    if (anchor !== undefined) this.anchors.set(anchor, open);
    const common = { depth, anchor, before, start: event.start };
    const mergeable = anchor !== undefined || parent?.kind === 'merge' || (parent?.kind === 'mapping' && parent.key === mergeKey);
    if (event.type === EVENT_ID.MAPPING) this.frames.push({ ...common, kind: 'mapping', value: new Map(), key: undefined, lines: mergeable ? new Map() : undefined });
    else this.frames.push({ ...common, kind: merging ? 'merge' : 'sequence', value: [] });
  }

  private closeCollection(): void {
    const frame = this.frames.pop();
    if (frame === undefined) return;
    if (frame.kind === 'merge') {
      // goyaml merges a sequence's maps last to first, so the first wins.
      const target = this.frames.at(-1);
      if (target?.kind !== 'mapping') return;
      for (const source of frame.value.reverse()) this.merge(target, source);
      target.key = undefined;
      return;
    }
    if (frame.kind === 'mapping' && frame.lines !== undefined) this.mergeableLines.set(frame.value, frame.lines);
    if (frame.anchor !== undefined) this.anchors.set(frame.anchor, { value: frame.value, size: this.decodeCount - frame.before });
    this.place(frame.value, frame.start);
  }

  private alias(event: AliasEvent): void {
    const name = this.text.slice(event.anchorStart, event.anchorEnd);
    this.count(1, false);
    const target = this.anchors.get(name);
    if (target === undefined) throw new BodyError('invalid', `${yamlFailure}yaml: unknown anchor '${name}' referenced`);
    if (target === open) throw new BodyError('invalid', `${yamlFailure}yaml: anchor '${name}' value contains itself`);
    // The same value, counted again as goyaml expands it.
    this.count(target.size, true);
    this.place(target.value, event.anchorStart);
  }

  private scalar(event: ScalarEvent): void {
    const text = getScalarValue(this.text, event);
    const frame = this.frames.at(-1);
    let value: DecodedValue;
    if (event.tagStart >= 0) {
      value = explicitScalar(this.text.slice(event.tagStart, event.tagEnd), text);
    } else if (event.style !== SCALAR_STYLE.PLAIN) {
      value = text;
    } else {
      const resolved = implicitScalar(text, frame?.kind === 'mapping' && frame.key === undefined);
      // A merge key is no node of its own: what follows it is merged.
      if (resolved === mergeKey) {
        if (frame?.kind === 'mapping') frame.key = mergeKey;
        return;
      }
      value = resolved.value;
    }
    this.count(1, false);
    if (event.anchorStart >= 0) this.anchors.set(this.text.slice(event.anchorStart, event.anchorEnd), { value, size: 1 });
    this.place(value, event.valueStart);
  }

  /** Puts a finished node where the innermost collection expects one: a key, a value, an item. */
  private place(value: DecodedValue, offset: number): void {
    const frame = this.frames.at(-1);
    if (frame === undefined) {
      this.root = value;
    } else if (frame.kind !== 'mapping') {
      frame.value.push(value);
    } else if (frame.key === mergeKey) {
      this.merge(frame, value);
      frame.key = undefined;
    } else if (frame.key === undefined) {
      frame.key = { name: keyString(value), offset };
    } else {
      // An empty value has no position; goyaml's is its key's line.
      this.set(frame, frame.key.name, value, this.lineOf(offset < 0 ? frame.key.offset : offset));
      frame.key = undefined;
    }
  }

  private set(frame: Frame & { kind: 'mapping' }, name: string, value: DecodedValue, line: number | undefined): void {
    if (frame.value.has(name) && line !== undefined) this.duplicates.push(`line ${line}: key ${JSON.stringify(name)} already set in map`);
    frame.value.set(name, value);
    if (line !== undefined) frame.lines?.set(name, line);
  }

  /** YAML 1.1 merge key (`<<: *base` or `<<: [*a, *b]`): keys set before it are overwritten, as in goyaml's merge. */
  private merge(into: Frame & { kind: 'mapping' }, source: DecodedValue): void {
    if (!(source instanceof Map)) throw new BodyError('invalid', `${yamlFailure}yaml: map merge requires map or sequence of maps as the value`);
    const lines = this.mergeableLines.get(source);
    for (const [name, value] of source) this.set(into, name, value, lines?.get(name));
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

const yamlTag = 'tag:yaml.org,2002:';
const strTag = `${yamlTag}str`;
const mergeTag = `${yamlTag}merge`;

/** The `yaml` package's YAML 1.1 scalar tags, in the order it tries them on a plain scalar. */
const yaml11 = new Document(null, { version: '1.1' });
const scalarTags = yaml11.schema.tags.filter((tag): tag is ScalarTag => tag.collection === undefined);
/** The first characters of every plain scalar a YAML 1.1 tag other than !!str matches (null, bool, numbers, timestamps, `<<`). */
const mayResolve = new Set('~nNyYtTfFoO+-.0123456789<');

/**
 * A plain scalar resolved as YAML 1.1 resolves it without a tag: its tag
 * and value, or mergeKey for `<<` where a key stands.
 */
function implicitScalar(text: string, atKey: boolean): { readonly tag: string; readonly value: JsonValue } | typeof mergeKey {
  if (text !== '' && !mayResolve.has(text.charAt(0))) return { tag: strTag, value: text };
  const tag = scalarTags.find((t) => (t.default === true || (atKey && t.default === 'key')) && t.test?.test(text) === true);
  if (tag === undefined) return { tag: strTag, value: text };
  if (tag.tag === mergeTag) return mergeKey;
  const resolved = tag.resolve(text, (message) => {
    throw new BodyError('invalid', `${yamlFailure}yaml: ${message}`);
  }, yaml11.options);
  return { tag: tag.tag, value: scalarValue(isScalar(resolved) ? resolved.value : resolved, text) };
}

/** goyaml decodes timestamps into interface{} as their text; numbers, booleans and null as such. */
function scalarValue(value: unknown, source: string): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : source;
  if (typeof value === 'bigint') return Number(value);
  return source;
}

/** Tags goyaml resolves a scalar against (resolve.go resolvableTag); any other tag leaves the scalar a string. */
const resolvableTags = new Set(['str', 'bool', 'int', 'float', 'null', 'timestamp'].map((name) => `${yamlTag}${name}`));

/** A scalar with an explicit tag, as goyaml v2's resolve and decoder.scalar decode it. */
function explicitScalar(written: string, text: string): JsonValue {
  const tag = written.startsWith('!!') ? `${yamlTag}${written.slice(2)}` : written.startsWith('!<') ? written.slice(2, -1) : written;
  if (tag === `${yamlTag}binary`) return binaryText(text);
  if (tag === strTag || !resolvableTags.has(tag)) return text;
  const resolved = implicitScalar(text, false);
  const resolvedTag = resolved === mergeKey ? strTag : resolved.tag;
  if (resolved !== mergeKey && (resolvedTag === tag || (tag === `${yamlTag}float` && resolvedTag === `${yamlTag}int`))) return resolved.value;
  const short = (name: string) => (name.startsWith(yamlTag) ? `!!${name.slice(yamlTag.length)}` : name);
  throw new BodyError('invalid', `${yamlFailure}yaml: cannot decode ${short(resolvedTag)} \`${text}\` as a ${short(tag)}`);
}

/** A `!!binary` scalar: its bytes, decoded as Go's base64.StdEncoding does (padding required, line breaks ignored). */
function binaryText(text: string): string {
  const base64 = text.replace(/[\r\n]/g, '');
  if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw new BodyError('invalid', `${yamlFailure}yaml: !!binary value contains invalid base64 data`);
  return Buffer.from(base64, 'base64').toString('utf8');
}

/** sigs.k8s.io/yaml turns scalar keys into JSON strings and refuses others. */
function keyString(key: DecodedValue): string {
  if (key === null) return 'null';
  if (typeof key === 'object') throw new BodyError('invalid', `${yamlFailure}error converting YAML to JSON: yaml: invalid map key`);
  return String(key);
}

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

function decodeYaml(text: string, maxDepth: number): { value: DecodedValue; duplicates: string[] } {
  // goyaml's Unmarshal reads the first document only: what follows it is not an error.
  const document = text.slice(0, secondDocumentStart(text));
  let events: Event[];
  try {
    // js-yaml counts scalars and keys into its depth too: a little more than ours keeps its bound out of our way.
    events = parseEvents(document, { maxDepth: maxDepth + parserDepthSlack });
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    if (error.reason.startsWith('nesting exceeded maxDepth')) throw new BodyError('invalid', `${yamlFailure}yaml: exceeded max depth of ${maxDepth}`);
    throw new BodyError('invalid', `${yamlFailure}yaml: line ${(error.mark?.line ?? 0) + 1}: ${error.reason}`);
  }
  refuseInvalidEscapes(document, events);
  const decoder = new EventDecoder(document, maxDepth);
  const value = decoder.decode(events);
  // goyaml reports every repeated key in one error, a line each.
  const duplicates = decoder.duplicates.length === 0 ? [] : [`yaml: unmarshal errors:\n${decoder.duplicates.map((d) => `  ${d}`).join('\n')}`];
  return { value, duplicates };
}

const parserDepthSlack = 10;

/**
 * Escapes goyaml's scanner (go.yaml.in/yaml/v2 scannerc.go,
 * yaml_parser_scan_flow_scalar) refuses in a double-quoted scalar: a `\u`
 * or `\U` naming a surrogate half or lying beyond U+10FFFF ("found invalid
 * Unicode character escape code"), a valid JSON surrogate pair included. It
 * scans the whole document before decoding any of it, so this comes before
 * every decoding error.
 */
function refuseInvalidEscapes(document: string, events: readonly Event[]): void {
  const line = invalidEscapeLine(document, events);
  if (line !== undefined) throw new BodyError('invalid', `${yamlFailure}yaml: ${line === 0 ? '' : `line ${line}: `}found invalid Unicode character escape code`);
}

/**
 * Where a second document starts (a `---` or `...` line after the first
 * document's content), if any. Such a line always ends a document (or is
 * an error inside it), whatever precedes it.
 */
export function secondDocumentStart(text: string): number | undefined {
  let content = false;
  for (let line = 0; line < text.length; ) {
    const next = text.indexOf('\n', line);
    const end = next === -1 ? text.length : next;
    const marker = text.startsWith('---', line) || text.startsWith('...', line);
    const markerLine = marker && (line + 3 === end || ' \t\r'.includes(text.charAt(line + 3)));
    if (markerLine && content) return line;
    if (!content) content = !(text.startsWith('#', line) || text.startsWith('%', line) || /^[ \t\r]*$/.test(text.slice(line, end)));
    line = end + 1;
  }
  return undefined;
}


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
export function pruneUnknownFields(value: DecodedValue, schema: PruneSchema, mergePatch = false): { value: JsonValue; unknownFields: string[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { value: plain(value), unknownFields: [] };
  const unknownFields: string[] = [];
  const result = prune(value, { ...schema, 'x-kubernetes-embedded-resource': true }, '', { unknownFields, mergePatch });
  return { value: result, unknownFields: sortedAsGo(unknownFields) };
}

/**
 * Strings in byte order, as Go's sort.Strings orders them. UTF-16 order (JavaScript's) is the same but for
 * characters beyond the BMP against U+E000–U+FFFF; only then are the strings compared as UTF-8.
 */
function sortedAsGo(texts: string[]): string[] {
  if (!texts.some((text) => /[\uD800-\uFFFF]/.test(text))) return texts.sort();
  return texts
    .map((text) => ({ text, bytes: Buffer.from(text) }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map(({ text }) => text);
}

interface Pruning {
  readonly unknownFields: string[];
  readonly mergePatch: boolean;
}

function prune(value: DecodedValue, schema: PruneSchema | undefined, path: string, pruning: Pruning): JsonValue {
  const preserve = schema?.['x-kubernetes-preserve-unknown-fields'] === true;
  if (Array.isArray(value)) {
    // Items of a preserved list are preserved too (kube's skipPrune).
    const items = preserve ? (schema.items === undefined ? undefined : { ...schema.items, 'x-kubernetes-preserve-unknown-fields': true }) : schema?.items;
    if (preserve && items === undefined) return plain(value);
    return value.map((item, index) => prune(item, items, `${path}[${index}]`, pruning));
  }
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, JsonValue> = {};
  const pruneField = (key: string, child: DecodedValue) => {
    const known = property(schema, key) ?? additional(schema);
    if (schema?.['x-kubernetes-embedded-resource'] === true && metaFields.has(key)) setField(result, key, plain(child));
    else if (known !== undefined) setField(result, key, prune(child, known, path === '' ? key : `${path}.${key}`, pruning));
    else if (preserve) setField(result, key, plain(child));
    else if (!(pruning.mergePatch && child === null)) pruning.unknownFields.push(path === '' ? key : `${path}.${key}`);
  };
  // Object.keys, not Object.entries: no pair allocated per field of a 100,000-field object.
  if (value instanceof Map) for (const [key, child] of value) pruneField(key, child);
  else for (const key of Object.keys(value)) pruneField(key, value[key] ?? null);
  return result;
}

/** The schema of a declared property; `constructor` and the like are fields, not Object.prototype's. */
function property(schema: PruneSchema | undefined, key: string): PruneSchema | undefined {
  const properties = schema?.properties;
  return properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : undefined;
}

/** `object[key] = value`, also for the key `__proto__`, which an assignment would take for the prototype. */
function setField(object: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

const plainMaps = new WeakMap<DecodedMap, JsonValue>();

/** A decoded value as JSON values: YAML's Maps as objects, each converted once however many aliases share it. */
function plain(value: DecodedValue): JsonValue {
  if (Array.isArray(value)) return value.map(plain);
  if (!(value instanceof Map)) {
    // Scalars, and objects from JSON.parse, which hold no Map.
    return value as JsonValue;
  }
  const known = plainMaps.get(value);
  if (known !== undefined) return known;
  const result: Record<string, JsonValue> = {};
  for (const [key, child] of value) setField(result, key, plain(child));
  plainMaps.set(value, result);
  return result;
}

/** The schema of a map's values; `true` keeps whatever they hold. */
function additional(schema: PruneSchema | undefined): PruneSchema | undefined {
  const values = schema?.additionalProperties;
  if (values === undefined || values === false) return undefined;
  return values === true ? { 'x-kubernetes-preserve-unknown-fields': true } : values;
}

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

/**
 * The line goyaml names for the first such escape among the document's
 * double-quoted scalars: 0 on the first line (a scanner error names none
 * there), else the 1-based line; undefined when there is none.
 */
export function invalidEscapeLine(document: string, events: readonly Event[]): number | undefined {
  for (const event of events) {
    if (event.type !== EVENT_ID.SCALAR || event.style !== SCALAR_STYLE.DOUBLE_QUOTED) continue;
    const offset = invalidUnicodeEscape(document, event.valueStart, event.valueEnd);
    if (offset === undefined) continue;
    const line = document.slice(0, offset).split('\n').length - 1;
    return line === 0 ? 0 : line + 1;
  }
  return undefined;
}

/** Where in text[start, end) a `\u`/`\U` escape names no Unicode scalar value (escaped backslashes skipped). */
export function invalidUnicodeEscape(text: string, start = 0, end = text.length): number | undefined {
  for (let i = start; i < end; i++) {
    if (text[i] !== '\\') continue;
    const width = text[i + 1] === 'u' ? 4 : text[i + 1] === 'U' ? 8 : 0;
    const digits = text.slice(i + 2, i + 2 + width);
    if (width > 0 && digits.length === width && /^[0-9a-fA-F]+$/.test(digits)) {
      const code = Number.parseInt(digits, 16);
      if ((code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return i;
    }
    i++;
  }
  return undefined;
}
