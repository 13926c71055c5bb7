import { describe, expect, it } from 'vitest';
import { parseAccept, parseContentType } from '../../../src/api/negotiation.js';

const essence = (header: string | undefined): string[] => parseAccept(header).map((r) => `${r.type}/${r.subtype};q=${r.q}`);

describe('parseAccept (goautoneg ParseAccept)', () => {
  it.each([
    [undefined, ['*/*;q=1']],
    ['', ['*/*;q=1']],
    // q=0 is kept, an unparsable q is 0 (strconv.ParseFloat's error value), the value is not trimmed.
    ['application/json;q=0', ['application/json;q=0']],
    ['application/json;q=abc', ['application/json;q=0']],
    ['application/json;q= 0.5', ['application/json;q=0']],
    ['application/json;q=1e-1', ['application/json;q=0.1']],
    // Higher q first; at equal q a specific type before a wildcard type, a specific subtype before a wildcard subtype.
    ['text/plain;q=0.5, application/json', ['application/json;q=1', 'text/plain;q=0.5']],
    ['*/*, application/*, application/json', ['application/json;q=1', 'application/*;q=1', '*/*;q=1']],
    // `*` alone is */*; other types without a subtype, or with two slashes, are skipped.
    ['*', ['*/*;q=1']],
    ['application, application/, a/b/c, ,', []],
    // Case is kept: kube compares it exactly.
    ['Application/JSON', ['Application/JSON;q=1']],
  ])('%j', (header, expected) => {
    expect(essence(header)).toEqual(expected);
  });

  it('keeps parameters as sent (trimmed of spaces, quotes kept) and skips ones without a single =', () => {
    expect(parseAccept('application/json; as = Table ;g="meta.k8s.io";v;x=a=b')[0]?.params).toEqual({ as: 'Table', g: '"meta.k8s.io"' });
  });
});

describe('parseContentType (Go mime.ParseMediaType)', () => {
  it.each([
    [undefined, ''],
    ['', ''],
    ['application/json', 'application/json'],
    ['Application/JSON; charset=UTF-8', 'application/json'],
    ['application/json;', 'application/json'],
    ['application/json; charset="utf-8" ; x = y', 'application/json'],
    ['json', 'json'],
    [';;;', undefined],
    ['application/', undefined],
    ['application/json/x', undefined],
    ['application/json;;', undefined],
    ['application/json; charset', undefined],
    ['application/json; a=1; A=2', undefined],
    ['application/json; a=@', undefined],
  ])('%j → %j', (header, expected) => {
    expect(parseContentType(header)).toBe(expected);
  });
});
