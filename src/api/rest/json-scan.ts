/**
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
        if (parent.keys.has(key)) duplicates.push(pathOf(open, key));
        parent.keys.add(key);
        parent.pendingKey = key;
      } else {
        nextSegment();
      }
      position = end;
    } else if (code === 0x2c) {
      const parent = open.at(-1);
      if (parent !== undefined) parent.pendingKey = undefined;
    } else if (code !== 0x3a && code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) {
      // A number, true, false or null: consume it as one value.
      nextSegment();
      while (position + 1 < text.length && !',]} \t\r\n'.includes(text.charAt(position + 1))) position++;
    }
  }
  return duplicates;
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
  const open: OpenContainer[] = [];
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
        parent.pendingKey = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
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
      const literal = text.slice(start, position + 1);
      if ((code === 0x2d || (code >= 0x30 && code <= 0x39)) && !Number.isFinite(Number(literal))) {
        const containers = open.map((container) => container.segment).filter((s): s is string | number => s !== undefined);
        return { literal, path: segment === undefined ? containers : [...containers, segment] };
      }
    }
  }
  return undefined;
}
