import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shareFieldSets, sharedFieldSet } from '../../../src/backing/shared-field-sets.js';
import { fullCollector } from '../../support/full-gc.js';

/** A field set as kube-apiserver sends it, decoded afresh each time (as every watch event is). */
function decoded(): Record<string, unknown> {
  return JSON.parse(
    '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:hostSelector":{".":{},"f:matchLabels":{".":{},"f:pool":{}}},"f:poweredOn":{}}}',
  ) as Record<string, unknown>;
}

/** Field sets: nested objects whose leaves are empty objects, with kube's key prefixes. */
const fieldSet: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ node: Record<string, unknown> }>((tie) => ({
  node: fc.dictionary(
    fc.oneof(fc.constant('.'), fc.string().map((s) => `f:${s}`), fc.string().map((s) => `k:${s}`)),
    fc.oneof({ depthSize: 'small' }, fc.constant({}), tie('node')),
    { maxKeys: 4 },
  ),
})).node;

describe('shared field sets', () => {
  it('gives equal field sets one frozen copy', () => {
    const first = sharedFieldSet(decoded());
    const second = sharedFieldSet(decoded());
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first['f:spec'])).toBe(true);
    expect(() => {
      (first['f:spec'] as Record<string, unknown>)['f:image'] = {};
    }).toThrow(TypeError);
  });

  it('keeps field sets that differ, in content or in key order, apart', () => {
    const base = sharedFieldSet({ 'f:spec': { 'f:a': {}, 'f:b': {} } });
    expect(sharedFieldSet({ 'f:spec': { 'f:a': {}, 'f:c': {} } })).not.toBe(base);
    const reordered = sharedFieldSet({ 'f:spec': { 'f:b': {}, 'f:a': {} } });
    expect(reordered).not.toBe(base);
    expect(JSON.stringify(reordered)).toBe('{"f:spec":{"f:b":{},"f:a":{}}}');
  });

  it('answers with the same JSON text it was given, for any field set', () => {
    fc.assert(
      fc.property(fieldSet, (fields) => {
        const text = JSON.stringify(fields);
        expect(JSON.stringify(sharedFieldSet(JSON.parse(text) as Record<string, unknown>))).toBe(text);
      }),
    );
  });

  it('replaces each managedFields entry’s field set in place and leaves the rest of the object as it was', () => {
    const object = {
      metadata: {
        name: 'a',
        managedFields: [
          { manager: 'kubectl', fieldsType: 'FieldsV1', fieldsV1: decoded() },
          { manager: 'binder', fieldsV1: decoded() },
          { manager: 'none' },
        ],
      },
      spec: { poweredOn: true },
    };
    const original = structuredClone(object);
    expect(shareFieldSets(object)).toBe(object);
    expect(object).toEqual(original);
    const [kubectl, binder] = object.metadata.managedFields;
    expect(kubectl?.fieldsV1).toBe(sharedFieldSet(decoded()));
    expect(binder?.fieldsV1).toBe(kubectl?.fieldsV1);
    expect(Object.isFrozen(object.spec)).toBe(false);
  });

  it('leaves objects without managedFields, or with malformed ones, alone', () => {
    const none = { metadata: { name: 'a' } };
    expect(shareFieldSets(none)).toEqual({ metadata: { name: 'a' } });
    const malformed = { metadata: { managedFields: [null, 'x', { fieldsV1: [] }, { fieldsV1: 'text' }] } };
    expect(shareFieldSets(malformed)).toEqual({ metadata: { managedFields: [null, 'x', { fieldsV1: [] }, { fieldsV1: 'text' }] } });
  });

  it('does not keep a field set that no object holds any more', async () => {
    const gc = fullCollector();
    const unique = (): Record<string, unknown> => ({ 'f:metadata': { 'f:labels': { 'f:only-in-this-test': {} } } });
    const released = ((): WeakRef<object> => new WeakRef(sharedFieldSet(unique())))();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(released.deref()).toBeUndefined();
    // An equal field set seen afterwards becomes the shared copy itself.
    const again = unique();
    expect(sharedFieldSet(again)).toBe(again);
  });
});
