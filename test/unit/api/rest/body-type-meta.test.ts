import { describe, expect, it } from 'vitest';
import { groupVersionString, interpretTypeMeta, parseGroupVersion, summarizeData, withDefaults, yamlReaderError } from '../../../../src/api/rest/body-type-meta.js';
import { firstOverflowingNumber } from '../../../../src/api/rest/json-scan.js';

const findKind = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';
const served = { group: 'tenancy.metal3.io', version: 'v1alpha1' };

describe('interpretTypeMeta (SimpleMetaFactory.Interpret)', () => {
  it.each([
    ['an object', { apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim' }, { apiVersion: served, kind: 'HostClaim' }],
    ['keys in any case', { APIVERSION: 'v1', Kind: 'Pod' }, { apiVersion: { group: '', version: 'v1' }, kind: 'Pod' }],
    ['nulls, as absent', { apiVersion: null, kind: null }, { apiVersion: { group: '', version: '' }, kind: '' }],
    ['null', null, { apiVersion: { group: '', version: '' }, kind: '' }],
    ['a kind that is a number', { kind: 5 }, { error: "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string" }],
    ['an apiVersion that is an object', { apiVersion: {} }, { error: "couldn't get version/kind; json parse error: json: cannot unmarshal object into Go struct field .apiVersion of type string" }],
    ['the first type error', { kind: true, apiVersion: [] }, { error: "couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go struct field .kind of type string" }],
    ['an array', [], { error: `couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type ${findKind}` }],
    ['a string', 'hello', { error: `couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type ${findKind}` }],
    ['a number', 5, { error: `couldn't get version/kind; json parse error: json: cannot unmarshal number into Go value of type ${findKind}` }],
    ['a bool', false, { error: `couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go value of type ${findKind}` }],
    ['an apiVersion with two slashes', { apiVersion: 'a/b/c', kind: 'HostClaim' }, { error: 'unexpected GroupVersion string: a/b/c' }],
  ])('%s', (_label, body, expected) => {
    expect(interpretTypeMeta(body)).toEqual(expected);
  });
});

describe('group versions', () => {
  it('parses and prints as schema.GroupVersion does', () => {
    expect(parseGroupVersion('')).toEqual({ group: '', version: '' });
    expect(parseGroupVersion('/')).toEqual({ group: '', version: '' });
    expect(parseGroupVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(parseGroupVersion('tenancy.metal3.io/')).toEqual({ group: 'tenancy.metal3.io', version: '' });
    expect(groupVersionString({ group: '', version: 'v1' })).toBe('v1');
    expect(groupVersionString({ group: 'g', version: '' })).toBe('g/');
  });

  it('completes what the body names from the endpoint (gvkWithDefaults)', () => {
    expect(withDefaults({ apiVersion: { group: '', version: '' }, kind: '' }, served, 'HostClaim')).toEqual({ version: 'v1alpha1', kind: 'HostClaim' });
    expect(withDefaults({ apiVersion: { group: 'tenancy.metal3.io', version: '' }, kind: 'Other' }, served, 'HostClaim')).toEqual({ version: 'v1alpha1', kind: 'Other' });
    expect(withDefaults({ apiVersion: { group: 'other.io', version: '' }, kind: '' }, served, 'HostClaim')).toEqual({ version: '', kind: 'HostClaim' });
    expect(withDefaults({ apiVersion: { group: '', version: 'v2' }, kind: '' }, served, 'HostClaim')).toEqual({ version: 'v2', kind: 'HostClaim' });
  });
});

describe('firstOverflowingNumber', () => {
  it('finds the first number float64 cannot hold, outside strings', () => {
    expect(firstOverflowingNumber('{"a":"1e400","b":[1,-2.5e3,9999999999999999999],"c":-1e400,"d":1e400}')?.literal).toBe('-1e400');
    expect(firstOverflowingNumber(`{"a":${'9'.repeat(400)}}`)?.literal).toBe('9'.repeat(400));
    expect(firstOverflowingNumber('{"k\\"1e400":1e-400,"x":1.7976931348623157e308}')).toBeUndefined();
  });
});

describe('summarizeData (transformDecodeError)', () => {
  it('shows an object as text and anything else in hex, 30 bytes at most', () => {
    expect(summarizeData(Buffer.from(''))).toBe('<empty>');
    expect(summarizeData(Buffer.from('{}'))).toBe('{}');
    expect(summarizeData(Buffer.from(`{"apiVersion":"tenancy.metal3.io/v1alpha1"}`))).toBe('{"apiVersion":"tenancy.metal3. ...');
    expect(summarizeData(Buffer.from('null'))).toBe('6e756c6c');
    expect(summarizeData(Buffer.from('a'.repeat(31)))).toBe(`${'61'.repeat(30)} ...`);
  });
});

describe('yamlReaderError (go-yaml readerc.go)', () => {
  const around = (bytes: number[]): Buffer => Buffer.concat([Buffer.from('# c'), Buffer.from(bytes), Buffer.from('\nkind: HostClaim\n')]);
  it.each([
    ['a stray continuation byte', [0x80], 'yaml: invalid leading UTF-8 octet'],
    ['0xff', [0xff], 'yaml: invalid leading UTF-8 octet'],
    ['an overlong encoding', [0xc0, 0xaf], 'yaml: invalid length of a UTF-8 sequence'],
    ['a surrogate half', [0xed, 0xa0, 0x80], 'yaml: invalid Unicode character'],
    ['a code point beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 'yaml: invalid Unicode character'],
    ['a truncated sequence', [0xe2, 0x82], 'yaml: invalid trailing UTF-8 octet'],
    ['NUL', [0x00], 'yaml: control characters are not allowed'],
    ['DEL', [0x7f], 'yaml: control characters are not allowed'],
  ])('%s', (_label, bytes, expected) => {
    expect(yamlReaderError(around(bytes))).toBe(expected);
  });

  it('accepts tabs, line ends, NEL, a leading UTF-8 BOM and any printable character', () => {
    expect(yamlReaderError(Buffer.from('\ufeffa:\t"é 中 😀 \u0085"\r\n'))).toBeUndefined();
  });

  it('refuses a sequence cut by the end of the body', () => {
    expect(yamlReaderError(Buffer.from([0x61, 0xe2, 0x82]))).toBe('yaml: incomplete UTF-8 octet sequence');
  });

  it('reads as far as goyaml reads for the first document: the 512-byte reads through the next document marker', () => {
    const twoDocuments = (second: string): string => `---\na: 1\n---\nb: ${second}\n`;
    // Within the read: refused; cut by the end of the input, which is never reached: accepted.
    expect(yamlReaderError(Buffer.concat([Buffer.from(twoDocuments('x')), Buffer.from([0x80])]))).toBe('yaml: invalid leading UTF-8 octet');
    expect(yamlReaderError(Buffer.concat([Buffer.from(twoDocuments('x')), Buffer.from([0xe2, 0x82])]))).toBeUndefined();
    // Beyond the first 512-byte read: never read.
    expect(yamlReaderError(Buffer.concat([Buffer.from(twoDocuments('x'.repeat(600))), Buffer.from([0x80])]))).toBeUndefined();
    expect(yamlReaderError(Buffer.concat([Buffer.from(`a: ${'x'.repeat(600)}\n`), Buffer.from([0x80])]))).toBe('yaml: invalid leading UTF-8 octet');
  });
});
