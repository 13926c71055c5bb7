/**
 * ObjectMeta, written once for every kind and every write verb:
 *
 * - typed decoding, as kube-apiserver decodes a custom resource's metadata
 *   into metav1.ObjectMeta (apiextensions-apiserver schema/objectmeta
 *   GetObjectMetaWithOptions, through k8s.io/apimachinery/pkg/util/json):
 *   a wrongly typed field is Go's `json: cannot unmarshal ...` error (the
 *   first type error wins; a bad timestamp stops decoding at once), nulls
 *   clear a field, unknown fields are dropped;
 * - create and update validation (k8s.io/apimachinery/pkg/api/validation
 *   objectmeta.go ValidateObjectMetaAccessor, ValidateObjectMetaAccessorUpdate,
 *   and the resets of k8s.io/apiserver/pkg/registry/rest BeforeUpdate).
 */
import { forbiddenField, invalidValue, required, tooLong, type FieldError } from './field-errors.js';
import { rfc3339ParseError } from './go-time.js';
import { dnsSubdomainErrors, labelKeyErrors, labelValueErrors } from './label-validation.js';
import type { ObjectMeta, OwnerReference } from './rest/types.js';
import { isJsonObject } from './json-value.js';

/** A decoding failure, worded as Go's encoding/json or time package words it. */
export class MetaDecodeError extends Error {}

type GoType = 'string' | 'types.UID' | 'int64' | 'bool' | 'time' | 'map[string]string' | 'raw' | 'v1.ManagedFieldsOperationType';

interface ListType {
  readonly list: string;
  readonly item: string;
  readonly struct: string;
  readonly fields: Readonly<Record<string, GoType>>;
}

const objectMetaFields: Readonly<Record<string, GoType | 'finalizers' | ListType>> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'types.UID',
  resourceVersion: 'string',
  generation: 'int64',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'int64',
  labels: 'map[string]string',
  annotations: 'map[string]string',
  finalizers: 'finalizers',
  ownerReferences: {
    list: '[]v1.OwnerReference',
    item: 'v1.OwnerReference',
    struct: 'OwnerReference',
    fields: { apiVersion: 'string', kind: 'string', name: 'string', uid: 'types.UID', controller: 'bool', blockOwnerDeletion: 'bool' },
  },
  managedFields: {
    list: '[]v1.ManagedFieldsEntry',
    item: 'v1.ManagedFieldsEntry',
    struct: 'ManagedFieldsEntry',
    fields: {
      manager: 'string',
      operation: 'v1.ManagedFieldsOperationType',
      apiVersion: 'string',
      time: 'time',
      fieldsType: 'string',
      fieldsV1: 'raw',
      subresource: 'string',
    },
  },
};

/** encoding/json's name for a JSON value's kind in UnmarshalTypeError. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'object' : typeof value;
}


/** Decodes one JSON value into a Go value; type errors are collected (the first is reported), time errors thrown. */
class Decoder {
  firstError: string | undefined;

  typeError(value: unknown, struct: string, field: string, type: string): void {
    const kind = typeof value === 'number' && jsonKind(value) === 'number' && type === 'int64' ? `number ${String(value)}` : jsonKind(value);
    this.firstError ??= `json: cannot unmarshal ${kind} into Go struct field ${struct}.${field} of type ${type}`;
  }

  scalar(value: unknown, type: GoType, struct: string, field: string): unknown {
    if (value === null) return undefined;
    switch (type) {
      case 'string':
      case 'types.UID':
      case 'v1.ManagedFieldsOperationType':
        if (typeof value === 'string') return value;
        break;
      case 'int64':
        if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 2 ** 63) return value;
        if (typeof value === 'number') {
          this.typeError(value, struct, field, 'int64');
          return undefined;
        }
        break;
      case 'bool':
        if (typeof value === 'boolean') return value;
        break;
      case 'time':
        if (typeof value !== 'string') {
          // metav1.Time unmarshals the JSON into a string first.
          this.typeError(value, struct, field, 'string');
          return undefined;
        }
        return this.time(value);
      case 'map[string]string':
        return this.stringMap(value, struct, field);
      case 'raw':
        return value;
    }
    this.typeError(value, struct, field, type === 'int64' ? 'int64' : type);
    return undefined;
  }

  time(value: string): string {
    const error = rfc3339ParseError(value);
    if (error !== undefined) throw new MetaDecodeError(error);
    return value;
  }

  stringMap(value: unknown, struct: string, field: string): Record<string, string> | undefined {
    if (!isJsonObject(value)) {
      this.typeError(value, struct, field, 'map[string]string');
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === null) out[key] = '';
      else if (typeof item === 'string') out[key] = item;
      else this.typeError(item, struct, field, 'string');
    }
    return out;
  }

  list(value: unknown, type: ListType | 'finalizers', field: string): unknown[] | undefined {
    if (value === null) return undefined;
    const listType = type === 'finalizers' ? '[]string' : type.list;
    if (!Array.isArray(value)) {
      this.typeError(value, 'ObjectMeta', field, listType);
      return undefined;
    }
    const items: unknown[] = value;
    return items.map((item) => {
      if (type === 'finalizers') {
        if (item === null) return '';
        if (typeof item === 'string') return item;
        this.typeError(item, 'ObjectMeta', field, 'string');
        return '';
      }
      if (item === null) return {};
      if (!isJsonObject(item)) {
        this.typeError(item, 'ObjectMeta', field, type.item);
        return {};
      }
      return this.struct(item, type.fields, type.struct, `${field}.`);
    });
  }

  struct(value: Record<string, unknown>, fields: Readonly<Record<string, GoType>>, struct: string, prefix: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const type = fields[key];
      if (type === undefined) continue;
      const decoded = this.scalar(item, type, struct, `${prefix}${key}`);
      if (decoded !== undefined) out[key] = decoded;
    }
    return out;
  }
}

/**
 * metadata as kube decodes it into metav1.ObjectMeta, known fields only;
 * throws MetaDecodeError with Go's message when it cannot be decoded.
 */
export function decodeObjectMeta(metadata: unknown): ObjectMeta {
  if (metadata === undefined || metadata === null) return {};
  if (!isJsonObject(metadata)) throw new MetaDecodeError(`json: cannot unmarshal ${jsonKind(metadata)} into Go value of type v1.ObjectMeta`);
  const decoder = new Decoder();
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    const type = objectMetaFields[key];
    if (type === undefined) continue;
    const decoded = typeof type === 'string' && type !== 'finalizers' ? decoder.scalar(value, type, 'ObjectMeta', key) : decoder.list(value, type, key);
    if (decoded !== undefined) out[key] = decoded;
  }
  if (decoder.firstError !== undefined) throw new MetaDecodeError(decoder.firstError);
  return out;
}

// ---------------------------------------------------------------------------
// Validation

const totalAnnotationSizeLimit = 256 * 1024;
const fieldManagerMaxLength = 128;

/** ValidateObjectMetaAccessor for a namespaced kind whose names are DNS subdomains (a custom resource's rule). */
export function validateObjectMetaCreate(meta: ObjectMeta): FieldError[] {
  const errors: FieldError[] = [];
  const generateName = meta.generateName ?? '';
  if (generateName !== '') {
    // NameIsDNSSubdomain's maskTrailingDash, which also drops the character before the dash.
    const masked = generateName.length > 1 && generateName.endsWith('-') ? `${generateName.slice(0, -2)}a` : generateName;
    for (const message of dnsSubdomainErrors(masked)) {
      errors.push(invalidValue('metadata.generateName', generateName, message));
    }
  }
  const name = meta.name ?? '';
  if (name === '') errors.push(required('metadata.name', 'name or generateName is required'));
  else for (const message of dnsSubdomainErrors(name)) errors.push(invalidValue('metadata.name', name, message));
  if ((meta.generation ?? 0) < 0) errors.push(invalidValue('metadata.generation', meta.generation, 'must be greater than or equal to 0'));
  return [...errors, ...validateCommon(meta), ...validateFinalizers(meta.finalizers ?? [])];
}

/**
 * What kube validates on an update of a custom resource, duplicates
 * included (the causes list them; the message drops repeats):
 * ValidateObjectMetaAccessor on the new object, then
 * ValidateObjectMetaAccessorUpdate twice (the generic BeforeUpdate and the
 * CRD strategy's ValidateUpdate each run it). Run after resetForUpdate.
 */
export function validateObjectMetaUpdate(next: ObjectMeta, old: ObjectMeta): FieldError[] {
  const accessor = [...validateCommon(next), ...validateFinalizers(next.finalizers ?? [])];
  const update = updateErrors(next, old);
  return [...accessor, ...update, ...update];
}

/** kube's BeforeUpdate resets: what a client may not change is taken from the stored object (in place). */
export function resetForUpdate(next: ObjectMeta, old: ObjectMeta): void {
  next.generation = old.generation;
  if ((next.uid ?? '') === '') next.uid = old.uid;
  if (old.creationTimestamp !== undefined) next.creationTimestamp = old.creationTimestamp;
  if (old.deletionTimestamp !== undefined) next.deletionTimestamp = old.deletionTimestamp;
  if (old.deletionGracePeriodSeconds !== undefined && next.deletionGracePeriodSeconds === undefined) {
    next.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  }
}

/** ValidateObjectMetaAccessorUpdate (managedFields aside: see validateCommon). */
function updateErrors(next: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errors: FieldError[] = [];
  if (old.deletionTimestamp !== undefined) {
    const added = [...new Set(next.finalizers ?? [])].filter((f) => !(old.finalizers ?? []).includes(f)).sort();
    if (added.length > 0) {
      errors.push(
        forbiddenField(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  for (const field of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
    if (next[field] !== old[field]) errors.push(invalidValue(`metadata.${field}`, next[field] ?? null, 'field is immutable'));
  }
  return [...errors, ...validateCommon(next)];
}

/**
 * Labels, annotations and owners. managedFields are not validated: kube's
 * field manager replaces what a client sends before validation runs, and
 * the record's own field manager does the same here.
 */
function validateCommon(meta: ObjectMeta): FieldError[] {
  return [...validateLabels(meta.labels ?? {}), ...validateAnnotations(meta.annotations ?? {}), ...validateOwnerReferences(meta.ownerReferences ?? [])];
}

function validateLabels(labels: Readonly<Record<string, string>>): FieldError[] {
  return Object.entries(labels).flatMap(([key, value]) => [
    ...labelKeyErrors(key).map((message) => invalidValue('metadata.labels', key, message)),
    ...labelValueErrors(value).map((message) => invalidValue('metadata.labels', value, message)),
  ]);
}

function validateAnnotations(annotations: Readonly<Record<string, string>>): FieldError[] {
  const errors = Object.keys(annotations).flatMap((key) => labelKeyErrors(key.toLowerCase()).map((message) => invalidValue('metadata.annotations', key, message)));
  const size = Object.entries(annotations).reduce((total, [key, value]) => total + Buffer.byteLength(key) + Buffer.byteLength(value), 0);
  if (size > totalAnnotationSizeLimit) errors.push(tooLong('metadata.annotations', totalAnnotationSizeLimit));
  return errors;
}

/** Decoded references may lack fields the type requires: kube decodes them as empty strings. */
function validateOwnerReferences(references: readonly Partial<OwnerReference>[]): FieldError[] {
  const errors: FieldError[] = [];
  let firstController = '';
  for (const reference of references) {
    const apiVersion = reference.apiVersion ?? '';
    const slash = apiVersion.lastIndexOf('/');
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    // schema.ParseGroupVersion splits at the first slash and gives up on a second one.
    const parsedVersion = apiVersion.split('/').length > 2 ? '' : version;
    if (parsedVersion === '') errors.push(invalidValue('metadata.ownerReferences.apiVersion', apiVersion, 'version must not be empty'));
    if ((reference.kind ?? '') === '') errors.push(invalidValue('metadata.ownerReferences.kind', reference.kind ?? '', 'must not be empty'));
    if ((reference.name ?? '') === '') errors.push(invalidValue('metadata.ownerReferences.name', reference.name ?? '', 'must not be empty'));
    if ((reference.uid ?? '') === '') errors.push(invalidValue('metadata.ownerReferences.uid', reference.uid ?? '', 'must not be empty'));
    if (group === '' && parsedVersion === 'v1' && reference.kind === 'Event') {
      errors.push(invalidValue('metadata.ownerReferences', reference, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (reference.controller === true) {
      const current = `${reference.kind ?? ''}/${reference.name ?? ''}`;
      if (firstController === '') firstController = current;
      else {
        errors.push(
          invalidValue(
            'metadata.ownerReferences',
            references,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      }
    }
  }
  return errors;
}

function validateFinalizers(finalizers: readonly string[]): FieldError[] {
  const errors = finalizers.flatMap((finalizer) => labelKeyErrors(finalizer).map((message) => invalidValue('metadata.finalizers', finalizer, message)));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errors.push(invalidValue('metadata.finalizers', finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errors;
}

/** ValidateFieldManager: at most 128 bytes, every character printable (unicode.IsPrint). */
export function fieldManagerErrors(fieldManager: string, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (Buffer.byteLength(fieldManager) > fieldManagerMaxLength) errors.push(tooLong(path, fieldManagerMaxLength));
  let offset = 0;
  for (const char of fieldManager) {
    if (!isPrintable(char)) {
      const code = (char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
      errors.push(invalidValue(path, fieldManager, `invalid character U+${code} (at position ${offset})`));
    }
    offset += Buffer.byteLength(char);
  }
  return errors;
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrintable(char: string): boolean {
  return char === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(char);
}
