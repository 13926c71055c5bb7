import { describe, expect, it } from 'vitest';
import { pruneToSchema } from '../../../../src/api/openapi/prune.js';
import type { K8sSchema } from '../../../../src/api/openapi/schema.js';

const schema: K8sSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    count: { type: 'integer' },
    ratio: { type: 'number' },
    on: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    opaque: { type: 'object' },
  },
};

describe('pruneToSchema', () => {
  it('keeps what the schema describes, in the schema order', () => {
    const value = { on: true, name: 'n', count: 3, ratio: 0.5, tags: ['a'], labels: { b: '2', a: '1' } };
    const pruned = pruneToSchema(value, schema);
    expect(pruned).toEqual(value);
    expect(JSON.stringify(pruned)).toBe('{"name":"n","count":3,"ratio":0.5,"on":true,"tags":["a"],"labels":{"a":"1","b":"2"}}');
  });

  it('drops unknown fields, mistyped values and the content of objects without a schema for it', () => {
    const value = { name: { secret: 'x' }, count: 1.5, ratio: 'NaN', on: 'yes', tags: ['a', 1, { b: 2 }], labels: { a: 1, b: 'ok' }, opaque: { secret: 'x' }, extra: 'x' };
    expect(pruneToSchema(value, schema)).toEqual({ tags: ['a'], labels: { b: 'ok' }, opaque: {} });
    expect(pruneToSchema('not an object', schema)).toBeUndefined();
    expect(pruneToSchema([{ name: 'n' }], schema)).toBeUndefined();
  });

  it('returns the parts pruning leaves as they are (nothing dropped, keys in schema order) themselves, and copies the others', () => {
    const tags = ['a', 'b'];
    const labels = { a: '1', b: '2' };
    const conforming = { name: 'n', count: 3, tags, labels };
    expect(pruneToSchema(conforming, schema)).toBe(conforming);
    const withExtra = { name: 'n', tags, labels, extra: 'x' };
    const pruned = pruneToSchema(withExtra, schema) as Record<string, unknown>;
    expect(pruned).not.toBe(withExtra);
    expect(pruned).toEqual({ name: 'n', tags, labels });
    expect([pruned['tags'], pruned['labels']]).toEqual([tags, labels]);
    expect(pruned['tags']).toBe(tags);
    expect(pruned['labels']).toBe(labels);
    const reordered = { count: 3, name: 'n' };
    expect(pruneToSchema(reordered, schema)).not.toBe(reordered);
    expect(JSON.stringify(pruneToSchema(reordered, schema))).toBe('{"name":"n","count":3}');
    const unsortedLabels = { b: '2', a: '1' };
    expect(JSON.stringify(pruneToSchema({ labels: unsortedLabels }, schema))).toBe('{"labels":{"a":"1","b":"2"}}');
  });
});
