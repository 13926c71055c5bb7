/**
 * Go's ways with strings, for messages and canonical forms that match
 * kube's to the byte: fmt's %q (strconv.Quote), bytewise string ordering
 * (sort.Strings) and encoding/json's output.
 *
 * Deviation from Go: %q decides which characters are printable from Go's
 * Unicode 15 tables; Node 24 has Unicode 17, so the ~10k characters assigned
 * since are shown raw instead of as \uxxxx. Lone UTF-16 surrogates
 * (impossible in Go strings) are shown as \udxxx.
 */

/** Go compares strings bytewise; for UTF-8 that is code point order. */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const diff = (a.codePointAt(i) ?? 0) - (b.codePointAt(i) ?? 0);
    if (diff !== 0) return diff;
  }
  return a.length - b.length;
}

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

const GO_NAMED_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['\x07', '\\a'],
  ['\b', '\\b'],
  ['\f', '\\f'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
  ['\v', '\\v'],
  ['"', '\\"'],
  ['\\', '\\\\'],
]);

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space. */
const GO_PRINTABLE = /^[ \p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

function goQuoteChar(char: string): string {
  const named = GO_NAMED_ESCAPES.get(char);
  if (named !== undefined) return named;
  const codePoint = char.codePointAt(0) ?? 0;
  if (codePoint < 0x20 || codePoint === 0x7f) return `\\x${hex(codePoint, 2)}`;
  if (GO_PRINTABLE.test(char)) return char;
  return codePoint < 0x10000 ? `\\u${hex(codePoint, 4)}` : `\\U${hex(codePoint, 8)}`;
}

/** Go's %q, which field errors use to show a string value. */
export function goQuote(text: string): string {
  let quoted = '"';
  for (const char of text) quoted += goQuoteChar(char);
  return quoted + '"';
}

/** encoding/json output: map keys sorted, <, >, &, U+2028 and U+2029 escaped. */
export function goJsonText(value: unknown): string {
  return JSON.stringify(sortKeys(value)).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort(compareCodePoints)
        .map((k) => [k, sortKeys(record[k])]),
    );
  }
  return value;
}
