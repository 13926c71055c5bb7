import { describe, expect, it } from 'vitest';
import { bodyLimits, checkJsonPatchSize, decodeObject, parseJson, strictDecodingWarnings } from '../../../../src/api/rest/body.js';
import { strictErrors } from '../../../../src/api/rest/body-worker.js';
import { duplicateFields, jsonDepth } from '../../../../src/api/rest/json-scan.js';
import { ApiError } from '../../../../src/api/status.js';

const deepJson = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const billionLaughs =
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' +
  ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefghi'[i] ?? ''}`).join(',')}]\n`).join('');

async function refusal(promise: Promise<unknown>): Promise<{ code: number; reason: string | undefined; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return { code: error.code, reason: error.reason, message: error.message };
}

describe('duplicateFields', () => {
  it('finds repeated keys with kube-style paths, at any depth', () => {
    expect(duplicateFields('{"spec":{"poweredOn":true,"poweredOn":false}}')).toEqual(['spec.poweredOn']);
    expect(duplicateFields('{"a":[{"x":1},{"x":1,"x":2}],"a":null}')).toEqual(['a[1].x', 'a']);
    expect(duplicateFields('{"k":"a\\"b","s":"}{,[]","k":1}')).toEqual(['k']);
    expect(duplicateFields('{"\\u006b":1,"k":2}')).toEqual(['k']);
  });

  it('reports nothing for well-formed objects, arrays and scalars', () => {
    expect(duplicateFields('{"metadata":{"name":"x","labels":{"a":"1","b":"2"}},"list":[1,2,{"a":true}]}')).toEqual([]);
    expect(duplicateFields(' [ ] ')).toEqual([]);
    expect(duplicateFields('"text"')).toEqual([]);
  });

  it('scans nesting far deeper than the stack without recursion', () => {
    expect(duplicateFields(`{"x":${deepJson(100_000)},"x":1}`)).toEqual(['x']);
  });
});

describe('jsonDepth', () => {
  it('counts objects and arrays, not brackets inside strings, and stops past the limit', () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}', 10)).toBe(3);
    expect(jsonDepth('"x"', 10)).toBe(0);
    expect(jsonDepth(deepJson(50), 10)).toBe(11);
  });
});

describe('parseJson bounds', () => {
  it(`accepts ${bodyLimits.maxDepth} levels and refuses one more with 400`, async () => {
    expect(parseJson(deepJson(bodyLimits.maxDepth))).toBeTypeOf('object');
    expect(await refusal(Promise.resolve().then(() => parseJson(deepJson(bodyLimits.maxDepth + 1))))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: 'the body of the request could not be decoded: exceeded max depth of 1000',
    });
  });

  it("refuses a JSON patch of more than kube's 10000 operations with 413", async () => {
    expect(() => {
      checkJsonPatchSize(Array(10_000).fill({ op: 'test', path: '', value: 1 }));
    }).not.toThrow();
    expect(
      await refusal(
        Promise.resolve().then(() => {
          checkJsonPatchSize(Array(10_001).fill({}));
        }),
      ),
    ).toEqual({
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    });
  });
});

describe('YAML bodies (decoded in a worker)', () => {
  it('reads the first document only, as goyaml\'s Unmarshal does, even when a later one is broken', async () => {
    expect((await decodeObject('a: 1\n---\nb: 2\n', 'application/yaml')).value).toEqual({ a: 1 });
    expect((await decodeObject('---\na: 1\n---\n: : [\n', 'application/yaml')).value).toEqual({ a: 1 });
  });

  it('refuse a \\u or \\U escape naming no Unicode scalar value in a double-quoted scalar, as goyaml\'s scanner does; elsewhere it is text', async () => {
    const escapeError = (line: string) => ({ code: 400, reason: 'BadRequest', message: `error decoding YAML: yaml: ${line}found invalid Unicode character escape code` });
    expect(await refusal(decodeObject('{"a":"\\ud800"}', 'application/yaml'))).toEqual(escapeError(''));
    expect(await refusal(decodeObject('a: 1\nb: "x \\ud83d\\ude00"\n', 'application/yaml'))).toEqual(escapeError('line 2: '));
    expect(await refusal(decodeObject('a: "\\U00110000"\n', 'application/yaml'))).toEqual(escapeError(''));
    expect((await decodeObject('a: \\ud800\nb: \'\\ud800\'\nc: "\\\\ud800 \\U0010FFFF"\n', 'application/yaml')).value).toEqual({ a: '\\ud800', b: '\\ud800', c: '\\ud800 \u{10ffff}' });
  });

  it('read a number float64 cannot hold as a string, as goyaml resolves it, JSON-looking YAML included', async () => {
    expect((await decodeObject('{"a":1e400,"b":[-1e999]}', 'application/yaml')).value).toEqual({ a: '1e400', b: ['-1e999'] });
    expect((await decodeObject('a: 1e400\n', 'application/yaml')).value).toEqual({ a: '1e400' });
  });

  it('decodes !!omap and !!pairs items as one-key maps and !!set as a map, as goyaml does', async () => {
    expect((await decodeObject('a: !!omap [x: 1, z: 2]\nb: !!pairs [x: 1]\nc: !!set {x}\n', 'application/yaml')).value).toEqual({ a: [{ x: 1 }, { z: 2 }], b: [{ x: 1 }], c: { x: null } });
  });

  it('decode YAML 1.1 as sigs.k8s.io/yaml does: merge keys, timestamps as text, anchors shared', async () => {
    await expect(decodeObject('base: &b {x: 1, z: 2}\nc:\n  <<: *b\n  z: 3\nd: 2001-12-14\ne: yes\nf: [*b]\n', 'application/yaml')).resolves.toEqual({
      value: {
        base: { x: 1, z: 2 },
        c: { x: 1, z: 3 },
        d: '2001-12-14',
        e: true,
        f: [{ x: 1, z: 2 }],
      },
      // goyaml merges by setting each key: UnmarshalStrict counts a key set again after a merge as repeated.
      duplicates: strictErrors(['yaml: unmarshal errors:\n  line 4: key "z" already set in map']),
      unknownFields: strictErrors([]),
      firstUnknownField: undefined,
    });
  });

  it('refuse alias bombs and self-references with goyaml messages', async () => {
    expect(await refusal(decodeObject(billionLaughs, 'application/yaml'))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: 'error decoding YAML: yaml: document contains excessive aliasing',
    });
    expect(await refusal(decodeObject('a: &a\n  b: *a\n', 'application/yaml'))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: "error decoding YAML: yaml: anchor 'a' value contains itself",
    });
  });

  it('allow many aliases of a small anchor, as goyaml does, in linear time', async () => {
    const decoded = (await decodeObject(`a: &a x\nb:\n${'- *a\n'.repeat(50_000)}`, 'application/yaml')).value as { b: string[] };
    expect(decoded.b).toHaveLength(50_000);
    expect(new Set(decoded.b)).toEqual(new Set(['x']));
  });

  it('refuse nesting beyond the bound, flow or block', async () => {
    const tooDeep = { code: 400, reason: 'BadRequest', message: 'error decoding YAML: yaml: exceeded max depth of 1000' };
    expect(await refusal(decodeObject(`${'['.repeat(10_000)}${']'.repeat(10_000)}`, 'application/yaml'))).toEqual(tooDeep);
    expect(await refusal(decodeObject(Array.from({ length: 1500 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1', 'application/yaml'))).toEqual(tooDeep);
  });

  it('report repeated keys with their lines as goyaml strict-decoding errors, JSON apply configurations too', async () => {
    await expect(decodeObject('a: 1\nb: 2\na: 3\nb: 4\n', 'application/yaml')).resolves.toEqual({
      value: { a: 3, b: 4 },
      duplicates: strictErrors(['yaml: unmarshal errors:\n  line 3: key "a" already set in map\n  line 4: key "b" already set in map']),
      unknownFields: strictErrors([]),
      firstUnknownField: undefined,
    });
    await expect(decodeObject('{"a":1,"a":2}', 'application/yaml')).resolves.toEqual({
      value: { a: 2 },
      duplicates: strictErrors(['yaml: unmarshal errors:\n  line 1: key "a" already set in map']),
      unknownFields: strictErrors([]),
      firstUnknownField: undefined,
    });
    await expect(decodeObject('{"a":{"b":1,"b":2}}', 'application/json')).resolves.toEqual({
      value: { a: { b: 2 } },
      duplicates: strictErrors(['duplicate field "a.b"']),
      unknownFields: strictErrors([]),
      firstUnknownField: undefined,
    });
  });

  it('report a merged key set before or after as repeated, on the line goyaml names (the value\'s)', async () => {
    const decoded = await decodeObject('base: &b\n  p: 1\n  q: 2\nc:\n  q: 0\n  <<: *b\n  p:\n    deep: 3\n', 'application/yaml');
    expect(decoded.value).toEqual({ base: { p: 1, q: 2 }, c: { q: 2, p: { deep: 3 } } });
    expect(decoded.duplicates).toEqual(strictErrors(['yaml: unmarshal errors:\n  line 3: key "q" already set in map\n  line 8: key "p" already set in map']));
  });

  it('resolve explicit scalar tags as goyaml does: refused when the text is not of the tag, unknown tags leave a string', async () => {
    await expect(decodeObject('a: !!str 5\nb: !!int "7"\nc: !!float 1\nd: !custom yes\ne: !!binary aGk=\nf: !<tag:yaml.org,2002:bool> on\n', 'application/yaml')).resolves.toMatchObject({
      value: { a: '5', b: 7, c: 1, d: 'yes', e: 'hi', f: true },
    });
    expect(await refusal(decodeObject('a: !!int abc\n', 'application/yaml'))).toEqual({ code: 400, reason: 'BadRequest', message: 'error decoding YAML: yaml: cannot decode !!str `abc` as a !!int' });
    expect(await refusal(decodeObject('a: !!binary "a"\n', 'application/yaml'))).toEqual({ code: 400, reason: 'BadRequest', message: 'error decoding YAML: yaml: !!binary value contains invalid base64 data' });
  });

  it('keep __proto__ a key like any other, and refuse a collection as a key', async () => {
    expect(JSON.stringify((await decodeObject('__proto__: {a: 1}\nb: 2\n', 'application/yaml')).value)).toBe('{"__proto__":{"a":1},"b":2}');
    expect(await refusal(decodeObject('? [a]\n: b\n', 'application/yaml'))).toEqual({ code: 400, reason: 'BadRequest', message: 'error decoding YAML: error converting YAML to JSON: yaml: invalid map key' });
  });

  it('name the line of a syntax error', async () => {
    expect(await refusal(decodeObject('a: 1\nb: c: d\n', 'application/yaml'))).toEqual({ code: 400, reason: 'BadRequest', message: 'error decoding YAML: yaml: line 2: bad indentation of a mapping entry' });
    expect(await refusal(decodeObject('a: "\\q"\n', 'application/yaml'))).toEqual({ code: 400, reason: 'BadRequest', message: 'error decoding YAML: yaml: line 1: unknown escape sequence' });
  });

  it('decode 100,000 keys in one mapping, their repeated keys and unknown fields included', async () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `  k${i}: v${i}\n`).join('');
    const decoded = await decodeObject(`spec:\n${keys}  k7: again\n`, 'application/yaml', { schema: { properties: { spec: { properties: {} } } } });
    expect(decoded.value).toEqual({ spec: {} });
    expect(decoded.unknownFields.count).toBe(100_000);
    expect(decoded.firstUnknownField).toBe('spec.k0');
    expect(decoded.duplicates).toEqual(strictErrors(['yaml: unmarshal errors:\n  line 100002: key "k7" already set in map']));
  });

  it('turn strict-decoding errors into kube warnings: one per line of a YAML error list', () => {
    expect(
      strictDecodingWarnings([
        'yaml: unmarshal errors:\n  line 3: key "a" already set in map\n  line 4: key "b" already set in map',
        'error converting YAML to JSON: yaml: unmarshal errors:\n  line 1: key "c" already set in map',
        'duplicate field "d"',
      ]),
    ).toEqual(['line 3: key "a" already set in map', 'line 4: key "b" already set in map', 'line 1: key "c" already set in map', 'duplicate field "d"']);
  });

  it('refuse a document whose aliases expand past the body limit with 413', async () => {
    const anchor = `a: &a "${'x'.repeat(200_000)}"\n`;
    expect(await refusal(decodeObject(`${anchor}b: [${Array(20).fill('*a').join(',')}]\n`, 'application/yaml'))).toEqual({
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: limit is 3145728',
    });
  });
});
