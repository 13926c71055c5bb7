/**
 * Linear, non-recursive scans of JSON text that JSON.parse has already
 * accepted: nesting depth (kube bounds it at 10000 in
 * k8s.io/apimachinery/pkg/util/json and Go's encoding/json scanner), keys
 * repeated within one object (kube's strict decoding, sigs.k8s.io/json)
 * and numbers too large for a float64; and the `\u` escapes goyaml refuses
 * (in JSON's strings, and in YAML's double-quoted scalars). Iterative on
 * purpose: the text may nest deeper than the stack allows.
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
