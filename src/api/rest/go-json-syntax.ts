/**
 * The syntax error Go's encoding/json gives for a JSON text (scanner.go:
 * checkValid, quoteChar), which kube quotes when it cannot read a body's
 * apiVersion and kind. Go scans bytes, so an invalid byte is named as the
 * Latin-1 character of that byte ('\u0080', 'í'). Iterative: the text may
 * nest deeper than the stack allows.
 */

type Context = 'value' | 'key' | 'afterKey' | 'afterPair' | 'afterElement' | 'afterTop';

const contextWords: Readonly<Record<Context, string>> = {
  value: 'looking for beginning of value',
  key: 'looking for beginning of object key string',
  afterKey: 'after object key',
  afterPair: 'after object key:value pair',
  afterElement: 'after array element',
  afterTop: 'after top-level value',
};

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

const controlEscapes: Readonly<Record<number, string>> = { 0x07: '\\a', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x0b: '\\v' };

/** Go's quoteChar: the byte as strconv.Quote prints the rune of the same number, in single quotes. */
export function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const escape = controlEscapes[c];
  if (escape !== undefined) return `'${escape}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  if (c === 0x5c) return "'\\\\'";
  // strconv.IsPrint: U+0080–U+00A0 and the soft hyphen are not printable.
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u${c.toString(16).padStart(4, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}

const invalid = (c: number, context: string): string => `invalid character ${quoteChar(c)} ${context}`;

/** Go's message for the first syntax error of `bytes`, or undefined when Go would accept the text. */
export function goJsonSyntaxError(bytes: Uint8Array): string | undefined {
  const stack: ('object' | 'array')[] = [];
  let context: Context = 'value';
  let i = 0;
  const afterValue = (): Context => {
    const top = stack.at(-1);
    return top === undefined ? 'afterTop' : top === 'object' ? 'afterPair' : 'afterElement';
  };
  while (i < bytes.length) {
    const c = bytes[i] ?? 0;
    if (isSpace(c)) {
      i++;
      continue;
    }
    switch (context) {
      case 'afterTop':
        return invalid(c, contextWords.afterTop);
      case 'afterKey':
        if (c !== 0x3a) return invalid(c, contextWords.afterKey);
        context = 'value';
        i++;
        continue;
      case 'afterPair':
      case 'afterElement': {
        const close = context === 'afterPair' ? 0x7d : 0x5d;
        if (c === 0x2c) context = context === 'afterPair' ? 'key' : 'value';
        else if (c === close) {
          stack.pop();
          context = afterValue();
        } else return invalid(c, contextWords[context]);
        i++;
        continue;
      }
      case 'key': {
        // `{}` closes an empty object; after a comma a key is required.
        if (c === 0x7d && lastNonSpace(bytes, i) === 0x7b) {
          stack.pop();
          context = afterValue();
          i++;
          continue;
        }
        if (c !== 0x22) return invalid(c, contextWords.key);
        const end = scanString(bytes, i);
        if (typeof end === 'string') return end;
        i = end;
        context = 'afterKey';
        continue;
      }
      case 'value': {
        if (c === 0x5d && stack.at(-1) === 'array' && lastNonSpace(bytes, i) === 0x5b) {
          stack.pop();
          context = afterValue();
          i++;
          continue;
        }
        let end: number | string;
        if (c === 0x7b || c === 0x5b) {
          stack.push(c === 0x7b ? 'object' : 'array');
          context = c === 0x7b ? 'key' : 'value';
          i++;
          continue;
        } else if (c === 0x22) end = scanString(bytes, i);
        else if (c === 0x2d || isDigit(c)) end = scanNumber(bytes, i);
        else if (c === 0x74 || c === 0x66 || c === 0x6e) end = scanLiteral(bytes, i);
        else return invalid(c, contextWords.value);
        if (typeof end === 'string') return end;
        i = end;
        context = afterValue();
        continue;
      }
    }
  }
  return context === 'afterTop' ? undefined : 'unexpected end of JSON input';
}

function lastNonSpace(bytes: Uint8Array, before: number): number | undefined {
  for (let j = before - 1; j >= 0; j--) if (!isSpace(bytes[j] ?? 0)) return bytes[j];
  return undefined;
}

/** The position after the string opening at `start`, or Go's error. */
function scanString(bytes: Uint8Array, start: number): number | string {
  let i = start + 1;
  while (i < bytes.length) {
    const c = bytes[i] ?? 0;
    if (c === 0x22) return i + 1;
    if (c < 0x20) return invalid(c, 'in string literal');
    if (c === 0x5c) {
      const e = bytes[i + 1];
      if (e === undefined) return 'unexpected end of JSON input';
      if (e === 0x75) {
        for (let k = 2; k < 6; k++) {
          const h = bytes[i + k];
          if (h === undefined) return 'unexpected end of JSON input';
          if (!isHex(h)) return invalid(h, 'in \\u hexadecimal character escape');
        }
        i += 6;
        continue;
      }
      if (!'"\\/bfnrt'.includes(String.fromCharCode(e))) return invalid(e, 'in string escape code');
      i += 2;
      continue;
    }
    i++;
  }
  return 'unexpected end of JSON input';
}

/** The position after the number starting at `start`, or Go's error. */
function scanNumber(bytes: Uint8Array, start: number): number | string {
  let i = start;
  const at = (): number | undefined => bytes[i];
  if (at() === 0x2d) {
    i++;
    const c = at();
    if (c === undefined) return 'unexpected end of JSON input';
    if (!isDigit(c)) return invalid(c, 'in numeric literal');
  }
  if (at() === 0x30) i++;
  else while (isDigit(at() ?? -1)) i++;
  if (at() === 0x2e) {
    i++;
    const c = at();
    if (c === undefined) return 'unexpected end of JSON input';
    if (!isDigit(c)) return invalid(c, 'after decimal point in numeric literal');
    while (isDigit(at() ?? -1)) i++;
  }
  if (at() === 0x65 || at() === 0x45) {
    i++;
    if (at() === 0x2b || at() === 0x2d) i++;
    const c = at();
    if (c === undefined) return 'unexpected end of JSON input';
    if (!isDigit(c)) return invalid(c, 'in exponent of numeric literal');
    while (isDigit(at() ?? -1)) i++;
  }
  return i;
}

/** The position after true, false or null, or Go's error (`in literal true (expecting 'r')`). */
function scanLiteral(bytes: Uint8Array, start: number): number | string {
  const word = bytes[start] === 0x74 ? 'true' : bytes[start] === 0x66 ? 'false' : 'null';
  for (let k = 1; k < word.length; k++) {
    const c = bytes[start + k];
    if (c === undefined) return 'unexpected end of JSON input';
    if (c !== word.charCodeAt(k)) return invalid(c, `in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`);
  }
  return start + word.length;
}
