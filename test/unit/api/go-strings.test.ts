import { describe, expect, it } from 'vitest';
import { compareCodePoints, goJsonText, goQuote } from '../../../src/api/go-strings.js';

describe('goJsonText', () => {
  it("sorts map keys as Go's encoding/json does: by bytes of UTF-8, which is code point order, not UTF-16 order", () => {
    // U+FF21 (one UTF-16 unit, 0xFF21) sorts before U+1F600 (surrogates 0xD83D…) in UTF-16 order, after it by code point.
    expect(goJsonText({ '\u{1F600}': 1, '\uFF21': 2, b: 3, a: { d: 4, c: 5 } })).toBe('{"a":{"c":5,"d":4},"b":3,"\uFF21":2,"\u{1F600}":1}');
  });

  it('escapes <, >, & and the line separators as encoding/json does', () => {
    expect(goJsonText(['<a&b>', '\u2028\u2029'])).toBe('["\\u003ca\\u0026b\\u003e","\\u2028\\u2029"]');
  });
});

describe('compareCodePoints', () => {
  it('orders by code point, shorter prefix first', () => {
    expect(['\u{1F600}', '\uFF21', 'ab', 'a'].sort(compareCodePoints)).toEqual(['a', 'ab', '\uFF21', '\u{1F600}']);
  });
});

describe('goQuote', () => {
  it('quotes as %q does', () => {
    expect(goQuote('a"b\n\x01')).toBe('"a\\"b\\n\\x01"');
  });
});
