import { describe, expect, it } from 'vitest';
import { goJsonSyntaxError, quoteChar } from '../../../../src/api/rest/go-json-syntax.js';

const withBytes = (before: string, bytes: number[], after: string): Buffer => Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);

describe('goJsonSyntaxError (encoding/json scanner)', () => {
  // Each expected message is kube-apiserver's, as observed on the reference CRD.
  it.each([
    ['a stray byte first', withBytes('', [0x80], '{}'), "invalid character '\\u0080' looking for beginning of value"],
    ['an overlong sequence first', withBytes('', [0xc0, 0xaf], '{}'), "invalid character 'À' looking for beginning of value"],
    ['a surrogate half before a key', withBytes('{"a":1,', [0xed, 0xa0, 0x80], '"b":2}'), "invalid character 'í' looking for beginning of object key string"],
    ['a byte after a key', withBytes('{"a"', [0xf4], ':1}'), "invalid character 'ô' after object key"],
    ['a byte after a pair', withBytes('{"a":1', [0xe2, 0x82], '}'), "invalid character 'â' after object key:value pair"],
    ['a byte after the value', withBytes('{}', [0xff, 0xfe], ''), "invalid character 'ÿ' after top-level value"],
    ['NUL after the value', withBytes('{}', [0x00], ''), "invalid character '\\x00' after top-level value"],
    ['trailing text', Buffer.from('{"a":1}x'), "invalid character 'x' after top-level value"],
    ['two objects', Buffer.from('{}{}'), "invalid character '{' after top-level value"],
    ['an empty body', Buffer.from(''), 'unexpected end of JSON input'],
    ['a cut object', Buffer.from('{"a":[1,'), 'unexpected end of JSON input'],
    ['a comma before a closing brace', Buffer.from('{"a":1,}'), "invalid character '}' looking for beginning of object key string"],
    ['a comma before a closing bracket', Buffer.from('[1,]'), "invalid character ']' looking for beginning of value"],
    ['a byte after an element', Buffer.from('[1 2]'), "invalid character '2' after array element"],
    ['a control character in a string', Buffer.from('{"a":"\n"}'), "invalid character '\\n' in string literal"],
    ['a bad escape', Buffer.from('"\\x"'), "invalid character 'x' in string escape code"],
    ['a bad unicode escape', Buffer.from('"\\u12g4"'), "invalid character 'g' in \\u hexadecimal character escape"],
    ['a leading zero', Buffer.from('01'), "invalid character '1' after top-level value"],
    ['a bare minus', Buffer.from('-a'), "invalid character 'a' in numeric literal"],
    ['a bare decimal point', Buffer.from('1.e5'), "invalid character 'e' after decimal point in numeric literal"],
    ['a bare exponent', Buffer.from('1e+'), 'unexpected end of JSON input'],
    ['a misspelt literal', Buffer.from('[tru]'), "invalid character ']' in literal true (expecting 'e')"],
    ['a single quote', Buffer.from("{'a':1}"), "invalid character '\\'' looking for beginning of object key string"],
  ])('%s', (_label, bytes, expected) => {
    expect(goJsonSyntaxError(bytes)).toBe(expected);
  });

  it('accepts what Go accepts, invalid UTF-8 inside strings included', () => {
    for (const text of ['{}', ' [ ] ', '{"a":[1,-2.5e-3,true,false,null,{"b":"\\u00e9\\n"}]}', '0', '"x"']) expect(goJsonSyntaxError(Buffer.from(text))).toBeUndefined();
    expect(goJsonSyntaxError(withBytes('{"a":"', [0x80, 0xff], '"}'))).toBeUndefined();
  });

  it('quotes a byte as Go quotes the rune of that number', () => {
    expect([0x22, 0x5c, 0x7f, 0xa0, 0xa1, 0xad, 0xe9, 0x09].map(quoteChar)).toEqual([`'"'`, "'\\\\'", "'\\x7f'", "'\\u00a0'", "'¡'", "'\\u00ad'", "'é'", "'\\t'"]);
  });
});
