import { describe, expect, it } from 'vitest';
import { firstOverflowingNumber } from '../../../../src/api/rest/json-scan.js';
import { yamlReaderError } from '../../../../src/api/rest/body-type-meta.js';

describe('firstOverflowingNumber: what Go refuses to decode into a float64', () => {
  it.each([
    ['{"a":1}', undefined],
    ['{"a":0.1e-400,"b":18446744073709551616}', undefined],
    ['{"a":{"b":[1,1e400]}}', { literal: '1e400', path: ['a', 'b', 1] }],
    ['[{"op":"test","value":-1E400,"from":5}]', { literal: '-1E400', path: [0, 'value'] }],
    ['{"s":"1e400","k":{"x\\"y":1e999}}', { literal: '1e999', path: ['k', 'x"y'] }],
    ['1e400', { literal: '1e400', path: [] }],
  ])('%s', (text, expected) => {
    expect(firstOverflowingNumber(text)).toEqual(expected);
  });

  it('reports the first in document order', () => {
    expect(firstOverflowingNumber('{"z":1e400,"a":2e400}')?.literal).toBe('1e400');
  });
});

describe("yamlReaderError: goyaml's reader checks on an apply configuration", () => {
  it.each([
    ['plain text', Buffer.from('a: b\n'), undefined],
    ['multi-byte letters', Buffer.from('a: é日🙂\n'), undefined],
    ['a byte order mark', Buffer.from('\uFEFFa: b'), undefined],
    ['a lone continuation byte', Buffer.from([0x61, 0x80]), 'invalid leading UTF-8 octet'],
    ['a truncated sequence at the end', Buffer.from([0x61, 0xe2, 0x82]), 'incomplete UTF-8 octet sequence'],
    ['a bad trailing byte', Buffer.from([0xe2, 0x41, 0x41]), 'invalid trailing UTF-8 octet'],
    ['an overlong encoding', Buffer.from([0xc0, 0xaf]), 'invalid length of a UTF-8 sequence'],
    ['a surrogate', Buffer.from([0xed, 0xa0, 0x80]), 'invalid Unicode character'],
    ['NUL', Buffer.from([0x61, 0x00]), 'control characters are not allowed'],
    ['a C1 control character', Buffer.from('a\u0080'), 'control characters are not allowed'],
    ['NEL, which YAML allows', Buffer.from('a\u0085'), undefined],
  ])('%s', (_label, bytes, expected) => {
    expect(yamlReaderError(bytes)).toBe(expected === undefined ? undefined : `yaml: ${expected}`);
  });
});
