import { describe, expect, it } from 'vitest';
import { bodyLimits, decodeObject, parseJsonDocument } from '../../../../src/api/rest/body.js';
import { strictErrors } from '../../../../src/api/rest/body-worker.js';
import { pruneUnknownFields, type PruneSchema } from '../../../../src/api/rest/prune.js';

const schema: PruneSchema = {
  properties: {
    spec: {
      properties: {
        list: { items: { properties: { x: {} } } },
        labels: { additionalProperties: {} },
        free: { 'x-kubernetes-preserve-unknown-fields': true, properties: { typed: { properties: { a: {} } } } },
      },
    },
  },
};

describe('pruneUnknownFields (kube pruning/algorithm.go)', () => {
  it('removes what the schema does not know and reports kube paths, sorted, keeping apiVersion, kind and metadata at the root', () => {
    const body: Parameters<typeof pruneUnknownFields>[0] = {
      apiVersion: 'v',
      kind: 'K',
      metadata: { name: 'n', whatever: 1 },
      spec: {
        zz: 1,
        list: [{ x: 1, y: 2 }, { x: 2 }],
        labels: { a: 'b' },
        free: { anything: { goes: true }, typed: { a: 1, b: 2 } },
      },
      extra: { metadata: 1 },
    };
    expect(pruneUnknownFields(body, schema)).toEqual({
      value: {
        apiVersion: 'v',
        kind: 'K',
        metadata: { name: 'n', whatever: 1 },
        spec: { list: [{ x: 1 }, { x: 2 }], labels: { a: 'b' }, free: { anything: { goes: true }, typed: { a: 1 } } },
      },
      unknownFields: ['extra', 'spec.free.typed.b', 'spec.list[0].y', 'spec.zz'],
    });
  });

  it('prunes fields named after Object.prototype members: they are fields, not schema', () => {
    expect(pruneUnknownFields({ spec: { constructor: 1, toString: 2, list: [] } }, schema)).toEqual({ value: { spec: { list: [] } }, unknownFields: ['spec.constructor', 'spec.toString'] });
  });

  it('does not change values shared between places (YAML aliases)', () => {
    const shared: Parameters<typeof pruneUnknownFields>[0] = { x: 1, y: 2 };
    const body = { spec: { list: [shared], labels: { s: 'v' } } };
    pruneUnknownFields(body, schema);
    expect(shared).toEqual({ x: 1, y: 2 });
  });
});

describe('decodeObject against a schema', () => {
  const keys = (count: number): Record<string, number> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

  it('prunes small JSON here and large JSON and YAML in the worker, with the same answer', async () => {
    const small = { spec: { ...keys(3), list: [{ x: 1 }] } };
    const expected = {
      value: { spec: { list: [{ x: 1 }] } },
      duplicates: strictErrors([]),
      unknownFields: { count: 3, message: 'unknown field "spec.k0", unknown field "spec.k1", unknown field "spec.k2"', first: ['unknown field "spec.k0"', 'unknown field "spec.k1"', 'unknown field "spec.k2"'] },
      firstUnknownField: 'spec.k0',
    };
    await expect(decodeObject(JSON.stringify(small), 'application/json', { schema })).resolves.toEqual(expected);
    await expect(decodeObject('spec:\n  k0: 0\n  k1: 1\n  k2: 2\n  list: [{x: 1}]\n', 'application/yaml', { schema })).resolves.toEqual(expected);
    const large = JSON.stringify({ spec: keys(20_000) });
    expect(large.length).toBeGreaterThan(bodyLimits.maxJsonBytesOnEventLoop);
    for (const type of ['application/json', 'application/yaml']) {
      const decoded = await decodeObject(large, type, { schema });
      expect(decoded.value).toEqual({ spec: {} });
      // Sorted as Go sorts strings: k0, k1, k10, k100, …
      expect(decoded.unknownFields.first.slice(0, 4)).toEqual(['unknown field "spec.k0"', 'unknown field "spec.k1"', 'unknown field "spec.k10"', 'unknown field "spec.k100"']);
      // All of them in the message a Strict refusal carries, as many as kube's warnings could hold one by one.
      expect(decoded.unknownFields.count).toBe(20_000);
      expect(decoded.unknownFields.message.split(', ')).toHaveLength(20_000);
      expect(decoded.unknownFields.first).toHaveLength(4096);
    }
  });

  it('reports repeated keys and unknown fields', async () => {
    await expect(decodeObject('{"spec":{"zz":1,"zz":2}}', 'application/json', { schema })).resolves.toEqual({
      value: { spec: {} },
      duplicates: strictErrors(['duplicate field "spec.zz"']),
      unknownFields: strictErrors(['unknown field "spec.zz"']),
      firstUnknownField: 'spec.zz',
    });
  });

  it('drops nulls under unknown fields of a merge patch silently: they delete nothing', async () => {
    await expect(parseJsonDocument('{"spec":{"zz":null,"yy":1,"list":null}}', { schema, mergePatch: true })).resolves.toEqual({
      value: { spec: { list: null } },
      duplicates: strictErrors([]),
      unknownFields: strictErrors(['unknown field "spec.yy"']),
      firstUnknownField: 'spec.yy',
    });
  });

  it('checks a large JSON body in the worker as it would here: depth, then repeated keys', async () => {
    const filler = JSON.stringify(keys(10_000));
    await expect(decodeObject(`{"spec":{"zz":1,"zz":2},"f":${filler}}`, 'application/json', { schema })).resolves.toMatchObject({
      duplicates: strictErrors(['duplicate field "spec.zz"']),
      firstUnknownField: 'f',
    });
    await expect(decodeObject(`{"f":${filler},"spec":${'['.repeat(2000)}${']'.repeat(2000)}}`, 'application/json', { schema })).rejects.toMatchObject({
      code: 400,
      message: 'the body of the request could not be decoded: exceeded max depth of 1000',
    });
  });

  it('answers a large body that is not JSON as JSON.parse does', async () => {
    const broken = `{"spec":${JSON.stringify(keys(20_000))}`;
    await expect(decodeObject(broken, 'application/json', { schema })).rejects.toMatchObject({ code: 400, message: expect.stringMatching(/^the body of the request could not be decoded: /) as unknown });
  });
});
