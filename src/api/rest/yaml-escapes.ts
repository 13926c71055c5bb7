/**
 * Escapes goyaml's scanner (go.yaml.in/yaml/v2 scannerc.go,
 * yaml_parser_scan_flow_scalar) refuses in a double-quoted scalar: a `\u`
 * or `\U` naming a surrogate half or lying beyond U+10FFFF ("found
 * invalid Unicode character escape code"), a valid JSON surrogate pair
 * included. It scans the whole document before decoding any of it, so this
 * comes before every decoding error.
 */
import { EVENT_ID, SCALAR_STYLE, type Event } from 'js-yaml';

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
