/**
 * ObjectMeta decoding and validation. Every expected decoding message was
 * produced by Go: metav1.ObjectMeta unmarshalled with
 * k8s.io/apimachinery/pkg/util/json v0.36.3 (as apiextensions-apiserver
 * decodes a custom resource's metadata) on the same input.
 */
import { describe, expect, it } from 'vitest';
import { errorBody } from '../../../src/api/field-errors.js';
import { rfc3339ParseError } from '../../../src/api/go-time.js';
import { decodeObjectMeta, fieldManagerErrors, MetaDecodeError, resetForUpdate, validateObjectMetaCreate, validateObjectMetaUpdate } from '../../../src/api/object-meta.js';
import type { ObjectMeta } from '../../../src/api/rest/types.js';

function decodeError(metadata: unknown): string | undefined {
  try {
    decodeObjectMeta(metadata);
    return undefined;
  } catch (error) {
    if (error instanceof MetaDecodeError) return error.message;
    throw error;
  }
}

describe('decodeObjectMeta', () => {
  it.each([
    ['{"finalizers":"x"}', 'json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string'],
    ['{"finalizers":{}}', 'json: cannot unmarshal object into Go struct field ObjectMeta.finalizers of type []string'],
    ['{"finalizers":[5]}', 'json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string'],
    ['{"labels":[]}', 'json: cannot unmarshal array into Go struct field ObjectMeta.labels of type map[string]string'],
    ['{"labels":{"a":5}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string'],
    ['{"annotations":{"a":[]}}', 'json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type string'],
    ['{"name":5}', 'json: cannot unmarshal number into Go struct field ObjectMeta.name of type string'],
    ['{"uid":5}', 'json: cannot unmarshal number into Go struct field ObjectMeta.uid of type types.UID'],
    ['{"generation":1.5}', 'json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64'],
    ['{"generation":"1"}', 'json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64'],
    ['{"deletionGracePeriodSeconds":true}', 'json: cannot unmarshal bool into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64'],
    ['{"deletionGracePeriodSeconds":1.5}', 'json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64'],
    ['{"creationTimestamp":"garbage"}', 'parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"'],
    ['{"creationTimestamp":5}', 'json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string'],
    ['{"creationTimestamp":"2024-13-01T00:00:00Z"}', 'parsing time "2024-13-01T00:00:00Z": month out of range'],
    ['{"ownerReferences":[{"uid":5}]}', 'json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.uid of type types.UID'],
    ['{"ownerReferences":[{"controller":"yes"}]}', 'json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool'],
    ['{"ownerReferences":[{"blockOwnerDeletion":1}]}', 'json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.blockOwnerDeletion of type bool'],
    ['{"ownerReferences":{}}', 'json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference'],
    ['{"ownerReferences":[5]}', 'json: cannot unmarshal number into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference'],
    ['{"managedFields":[{"operation":5}]}', 'json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.operation of type v1.ManagedFieldsOperationType'],
    ['{"managedFields":[{"time":"x"}]}', 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'],
    ['{"managedFields":"x"}', 'json: cannot unmarshal string into Go struct field ObjectMeta.managedFields of type []v1.ManagedFieldsEntry'],
    ['{"managedFields":[5]}', 'json: cannot unmarshal number into Go struct field ObjectMeta.managedFields of type v1.ManagedFieldsEntry'],
    // The first type error is reported; a timestamp error stops decoding and wins.
    ['{"name":"x","uid":true,"finalizers":"x"}', 'json: cannot unmarshal bool into Go struct field ObjectMeta.uid of type types.UID'],
    ['{"finalizers":[5],"creationTimestamp":"bad"}', 'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"'],
    ['5', 'json: cannot unmarshal number into Go value of type v1.ObjectMeta'],
    ['[]', 'json: cannot unmarshal array into Go value of type v1.ObjectMeta'],
  ])('%s → %s', (input, message) => {
    expect(decodeError(JSON.parse(input))).toBe(message);
  });

  it('decodes what Go accepts as Go does: nulls clear, null items become empty, unknown fields are dropped', () => {
    expect(decodeObjectMeta(null)).toEqual({});
    expect(decodeObjectMeta(undefined)).toEqual({});
    expect(decodeObjectMeta({ labels: null, finalizers: null })).toEqual({});
    expect(decodeObjectMeta({ finalizers: [null, 'a'] })).toEqual({ finalizers: ['', 'a'] });
    expect(decodeObjectMeta({ annotations: { a: null } })).toEqual({ annotations: { a: '' } });
    expect(decodeObjectMeta({ managedFields: [{ fieldsV1: 5, manager: 'm', bogus: 1 }] })).toEqual({ managedFields: [{ fieldsV1: 5, manager: 'm' }] });
    expect(decodeObjectMeta({ name: 'a', generation: -3, unknown: { x: 1 } })).toEqual({ name: 'a', generation: -3 });
  });
});

describe('rfc3339ParseError (Go time.Parse with time.RFC3339)', () => {
  it.each([
    ['', 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'],
    ['2024-01-01', 'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"'],
    ['2024-02-30T00:00:00Z', 'parsing time "2024-02-30T00:00:00Z": day out of range'],
    ['2024-01-01T25:00:00Z', 'parsing time "2024-01-01T25:00:00Z": hour out of range'],
    ['2024-01-01T10:00:00Zx', 'parsing time "2024-01-01T10:00:00Zx": extra text: "x"'],
    ['2024-01-01T10:00:00+0100', 'parsing time "2024-01-01T10:00:00+0100" as "2006-01-02T15:04:05Z07:00": cannot parse "+0100" as "Z07:00"'],
    ['2024-01-01T10:00:60Z', 'parsing time "2024-01-01T10:00:60Z": second out of range'],
    ['é', 'parsing time "\\xc3\\xa9" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa9" as "2006"'],
    ['2024-01-01T10:00:00+25:00', 'parsing time "2024-01-01T10:00:00+25:00": time zone offset hour out of range'],
    ['2024-01-01 10:00:00Z', 'parsing time "2024-01-01 10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 10:00:00Z" as "T"'],
  ])('%j', (value, message) => {
    expect(rfc3339ParseError(value)).toBe(message);
  });

  it.each(['2024-01-01T01:00:00Z', '2024-01-01T1:00:00Z', '2024-01-01T10:00:00.123Z', '2024-02-29T00:00:00+02:00'])('accepts %j', (value) => {
    expect(rfc3339ParseError(value)).toBeUndefined();
  });
});

function messages(errors: ReturnType<typeof validateObjectMetaCreate>): string[] {
  return errors.map((e) => `${e.field}: ${errorBody(e)}`);
}

describe('validateObjectMetaCreate', () => {
  it('accepts a well-formed object', () => {
    expect(
      validateObjectMetaCreate({
        name: 'a.b-c',
        labels: { 'example.com/app': 'web' },
        annotations: { 'Example.com/Note': 'anything at all' },
        finalizers: ['example.com/cleanup'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u', controller: true }],
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1' }],
      }),
    ).toEqual([]);
  });

  it.each<[string, ObjectMeta, string[]]>([
    ['no name', {}, ['metadata.name: Required value: name or generateName is required']],
    [
      'an uppercase name',
      { name: 'A' },
      [
        `metadata.name: Invalid value: "A": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
    ],
    ['a label value with a space', { name: 'a', labels: { a: 'x y' } }, [
      `metadata.labels: Invalid value: "x y": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    ]],
    ['an ownerReference without uid', { name: 'a', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: '' }] }, [
      'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]],
    ['an ownerReference without version', { name: 'a', ownerReferences: [{ apiVersion: 'example.com/', kind: 'K', name: 'c', uid: 'u' }] }, [
      'metadata.ownerReferences.apiVersion: Invalid value: "example.com/": version must not be empty',
    ]],
    ['orphan and foregroundDeletion', { name: 'a', finalizers: ['orphan', 'foregroundDeletion'] }, [
      'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
    ]],
    // kube's field manager replaces a client's managedFields before validation: never an error.
    ['a bad managedFields operation', { name: 'a', managedFields: [{ manager: 'm', operation: 'Bogus' }] }, []],
    ['annotations over 256 KiB', { name: 'a', annotations: { a: 'x'.repeat(256 * 1024) } }, ['metadata.annotations: Too long: may not be more than 262144 bytes']],
  ])('%s', (_label, meta, expected) => {
    expect(messages(validateObjectMetaCreate(meta))).toEqual(expected);
  });

  it('validates generateName as a name prefix (maskTrailingDash)', () => {
    expect(validateObjectMetaCreate({ name: 'web-abcde', generateName: 'web-' })).toEqual([]);
    expect(messages(validateObjectMetaCreate({ name: 'x', generateName: 'Web-' }))[0]).toMatch(/^metadata\.generateName: Invalid value: "Web-": a lowercase RFC 1123 subdomain/);
  });
});

describe('validateObjectMetaUpdate', () => {
  const old: ObjectMeta = { name: 'a', namespace: 'n', uid: 'u1', generation: 2, creationTimestamp: '2024-01-01T00:00:00Z', resourceVersion: '7' };

  it('takes what a client may not change from the stored object (BeforeUpdate)', () => {
    const next: ObjectMeta = { name: 'a', namespace: 'n', generation: 9, creationTimestamp: '2030-01-01T00:00:00Z', resourceVersion: '7' };
    resetForUpdate(next, old);
    expect(validateObjectMetaUpdate(next, old)).toEqual([]);
    expect(next).toMatchObject({ uid: 'u1', generation: 2, creationTimestamp: '2024-01-01T00:00:00Z' });
  });

  it.each<[string, ObjectMeta, ObjectMeta, string[]]>([
    ['a changed uid', { ...old, uid: 'u2' }, old, ['metadata.uid: Invalid value: "u2": field is immutable']],
    ['a deletionTimestamp set by the client', { ...old, deletionTimestamp: '2020-01-01T00:00:00Z' }, old, [
      'metadata.deletionTimestamp: Invalid value: "2020-01-01T00:00:00Z": field is immutable',
    ]],
    ['a deletionGracePeriodSeconds set by the client', { ...old, deletionGracePeriodSeconds: 30 }, old, [
      'metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable',
    ]],
    ['a new finalizer on an object being deleted', { ...old, finalizers: ['a', 'b/c'] }, { ...old, deletionTimestamp: '2024-01-02T00:00:00Z', finalizers: ['a'] }, [
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b/c"}',
    ]],
  ])('%s (reported twice, as kube lists it in the causes)', (_label, next, previous, expected) => {
    resetForUpdate(next, previous);
    expect(messages(validateObjectMetaUpdate(next, previous))).toEqual([...expected, ...expected]);
  });

  it('reports label errors three times: once for the object, twice for the update', () => {
    const labelled = { ...old, labels: { 'a b': 'x' } };
    expect(validateObjectMetaUpdate(labelled, old).map((e) => e.field)).toEqual(['metadata.labels', 'metadata.labels', 'metadata.labels']);
  });
});

describe('fieldManagerErrors (ValidateFieldManager)', () => {
  it('accepts printable Unicode and refuses control characters and more than 128 bytes', () => {
    expect(fieldManagerErrors('équipe', 'fieldManager')).toEqual([]);
    expect(fieldManagerErrors('a\u0007b', 'fieldManager').map(errorBody)).toEqual(['Invalid value: "a\\ab": invalid character U+0007 (at position 1)']);
    expect(fieldManagerErrors('é'.repeat(65), 'fieldManager').map(errorBody)).toEqual(['Too long: may not be more than 128 bytes']);
  });
});
