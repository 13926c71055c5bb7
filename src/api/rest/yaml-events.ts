/**
 * YAML is decoded as go.yaml.in/yaml/v2 decodes it for sigs.k8s.io/yaml in
 * kube-apiserver (decode.go, resolve.go): alias expansion limited by the
 * ratio rule (allowedAliasRatio), an anchor may not contain its own alias
 * ("anchor 'a' value contains itself"), nesting bounded, explicit tags
 * resolved as resolve() does, repeated keys as UnmarshalStrict reports them.
 * js-yaml's event parser reads the text (a flat list of events with source
 * offsets: 2 MB with 100,000 keys in ~100 ms, a tenth of what the yaml
 * package's document model costs); one loop turns the events into values,
 * mappings as Maps, aliases sharing their anchor's value, so every step is
 * linear. Plain scalars resolve with the yaml package's YAML 1.1 tags
 * (yaml-scalars.ts).
 */
import { EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, YAMLException, type AliasEvent, type Event, type MappingEvent, type ScalarEvent, type SequenceEvent } from 'js-yaml';
import { BodyError, yamlFailure } from './body-error.ts';
import type { DecodedMap, DecodedValue } from './decoded-value.ts';
import { invalidUnicodeEscape } from './json-scan.ts';
import { explicitScalar, implicitScalar, mergeKey } from './yaml-scalars.ts';

// go.yaml.in/yaml/v2 decode.go: above 100 aliased and 1000 decoded nodes, the share of aliased ones is bounded.
const aliasRatioRangeLow = 400_000;
const aliasRatioRangeHigh = 4_000_000;

function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= aliasRatioRangeLow) return 0.99;
  if (decodeCount >= aliasRatioRangeHigh) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - aliasRatioRangeLow) / (aliasRatioRangeHigh - aliasRatioRangeLow));
}

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

/** sigs.k8s.io/yaml turns scalar keys into JSON strings and refuses others. */
function keyString(key: DecodedValue): string {
  if (key === null) return 'null';
  if (typeof key === 'object') throw new BodyError('invalid', `${yamlFailure}error converting YAML to JSON: yaml: invalid map key`);
  return String(key);
}

export function decodeYaml(text: string, maxDepth: number): { value: DecodedValue; duplicates: string[] } {
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

/**
 * The line goyaml names for the first such escape among the document's
 * double-quoted scalars: 0 on the first line (a scanner error names none
 * there), else the 1-based line; undefined when there is none.
 */
function invalidEscapeLine(document: string, events: readonly Event[]): number | undefined {
  for (const event of events) {
    if (event.type !== EVENT_ID.SCALAR || event.style !== SCALAR_STYLE.DOUBLE_QUOTED) continue;
    const offset = invalidUnicodeEscape(document, event.valueStart, event.valueEnd);
    if (offset === undefined) continue;
    const line = document.slice(0, offset).split('\n').length - 1;
    return line === 0 ? 0 : line + 1;
  }
  return undefined;
}
