/**
 * Checking the schema source as it is parsed: known keys only, structural
 * nodes, consistent `required` and list markers, JSON defaults and enums,
 * references of the form `#/definitions/<name>` that resolve. Every error
 * names the file and the path within it.
 */
import { refName, type JsonValue, type K8sSchema, type K8sSchemaType } from './schema.js';

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const SCHEMA_TYPES: ReadonlySet<string> = new Set(['boolean', 'object', 'number', 'string', 'integer', 'array']);
const STRING_KEYS = ['description', 'format', 'pattern'] as const;
const NUMBER_KEYS = ['multipleOf', 'maximum', 'minimum'] as const;
const COUNT_KEYS = ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'] as const;
const BOOLEAN_KEYS = [
  'exclusiveMaximum',
  'exclusiveMinimum',
  'uniqueItems',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
] as const;
const SCHEMA_KEYS: ReadonlySet<string> = new Set([
  '$ref',
  'type',
  'items',
  'properties',
  'additionalProperties',
  'required',
  'enum',
  'default',
  'x-kubernetes-group-version-kind',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  ...STRING_KEYS,
  ...NUMBER_KEYS,
  ...COUNT_KEYS,
  ...BOOLEAN_KEYS,
]);

export function parseSchema(value: unknown, where: string): K8sSchema {
  const node = asRecord(value, where);
  checkKeys(node, SCHEMA_KEYS, where);
  const out: Mutable<K8sSchema> = {};

  const ref = node['$ref'];
  if (ref !== undefined) {
    const extra = Object.keys(node).filter((k) => k !== '$ref' && k !== 'description');
    if (extra.length > 0) {
      throw new Error(`schema source ${where}: a $ref node may only carry a description (found ${extra.join(', ')})`);
    }
    if (typeof ref !== 'string') throw new Error(`schema source ${where}.$ref: must be a string`);
    refNameAt(ref, `${where}.$ref`);
    out.$ref = ref;
    const description = optionalString(node['description'], `${where}.description`);
    if (description !== undefined) out.description = description;
    return out;
  }

  const type = node['type'];
  if (typeof type !== 'string' || !SCHEMA_TYPES.has(type)) {
    throw new Error(`schema source ${where}.type: missing or not one of ${[...SCHEMA_TYPES].join(', ')}`);
  }
  out.type = type as K8sSchemaType;

  for (const key of STRING_KEYS) {
    const v = optionalString(node[key], `${where}.${key}`);
    if (v !== undefined) out[key] = v;
  }
  if (out.pattern !== undefined) {
    try {
      new RegExp(out.pattern, 'u');
    } catch (e) {
      throw new Error(`schema source ${where}.pattern: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }
  for (const key of NUMBER_KEYS) {
    const v = node[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`schema source ${where}.${key}: must be a number`);
    out[key] = v;
  }
  for (const key of COUNT_KEYS) {
    const v = node[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
      throw new Error(`schema source ${where}.${key}: must be a non-negative integer`);
    }
    out[key] = v;
  }
  for (const key of BOOLEAN_KEYS) {
    const v = node[key];
    if (v === undefined) continue;
    if (typeof v !== 'boolean') throw new Error(`schema source ${where}.${key}: must be a boolean`);
    out[key] = v;
  }

  if (node['items'] !== undefined) {
    if (type !== 'array') throw new Error(`schema source ${where}.items: only arrays have items`);
    out.items = parseSchema(node['items'], `${where}.items`);
  } else if (type === 'array') {
    throw new Error(`schema source ${where}: an array needs items`);
  }

  if (node['properties'] !== undefined) {
    if (type !== 'object') throw new Error(`schema source ${where}.properties: only objects have properties`);
    const props = asRecord(node['properties'], `${where}.properties`);
    const parsed: Record<string, K8sSchema> = {};
    for (const [key, sub] of Object.entries(props)) parsed[key] = parseSchema(sub, `${where}.properties.${key}`);
    if (Object.keys(parsed).length === 0) throw new Error(`schema source ${where}.properties: must not be empty`);
    out.properties = parsed;
  }

  const additional = node['additionalProperties'];
  if (additional !== undefined) {
    if (type !== 'object') throw new Error(`schema source ${where}.additionalProperties: only objects may have it`);
    if (out.properties !== undefined) {
      throw new Error(`schema source ${where}: properties and additionalProperties are mutually exclusive`);
    }
    out.additionalProperties =
      typeof additional === 'boolean' ? additional : parseSchema(additional, `${where}.additionalProperties`);
  }

  if (node['required'] !== undefined) {
    const required = stringList(node['required'], `${where}.required`);
    for (const name of required) {
      if (out.properties?.[name] === undefined) {
        throw new Error(`schema source ${where}.required: "${name}" is not a property`);
      }
    }
    out.required = required;
  }

  if (node['enum'] !== undefined) {
    const values = node['enum'];
    if (!Array.isArray(values) || values.length === 0) throw new Error(`schema source ${where}.enum: must be a non-empty list`);
    out.enum = values.map((v: unknown, i) => {
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
      throw new Error(`schema source ${where}.enum[${i}]: must be a scalar`);
    });
  }

  if (node['default'] !== undefined) out.default = jsonValue(node['default'], `${where}.default`);

  const listType = node['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (type !== 'array') throw new Error(`schema source ${where}: x-kubernetes-list-type on a non-array`);
    if (listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
      throw new Error(`schema source ${where}.x-kubernetes-list-type: must be atomic, set or map`);
    }
    out['x-kubernetes-list-type'] = listType;
  }
  if (node['x-kubernetes-list-map-keys'] !== undefined) {
    out['x-kubernetes-list-map-keys'] = stringList(node['x-kubernetes-list-map-keys'], `${where}.x-kubernetes-list-map-keys`);
  }
  if ((out['x-kubernetes-list-type'] === 'map') !== ((out['x-kubernetes-list-map-keys']?.length ?? 0) > 0)) {
    throw new Error(`schema source ${where}: x-kubernetes-list-map-keys goes with (and only with) x-kubernetes-list-type: map`);
  }

  const mapType = node['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (type !== 'object') throw new Error(`schema source ${where}: x-kubernetes-map-type on a non-object`);
    if (mapType !== 'atomic' && mapType !== 'granular') {
      throw new Error(`schema source ${where}.x-kubernetes-map-type: must be atomic or granular`);
    }
    out['x-kubernetes-map-type'] = mapType;
  }

  const gvks = node['x-kubernetes-group-version-kind'];
  if (gvks !== undefined) {
    const gvkWhere = `${where}.x-kubernetes-group-version-kind`;
    if (!Array.isArray(gvks) || gvks.length === 0) throw new Error(`schema source ${gvkWhere}: must be a non-empty list`);
    out['x-kubernetes-group-version-kind'] = gvks.map((entry: unknown, i) => {
      const record = asRecord(entry, `${gvkWhere}[${i}]`);
      checkKeys(record, new Set(['group', 'version', 'kind']), `${gvkWhere}[${i}]`);
      const group = record['group'];
      const version = record['version'];
      const kind = record['kind'];
      if (typeof group !== 'string' || typeof version !== 'string' || typeof kind !== 'string' || version === '' || kind === '') {
        throw new Error(`schema source ${gvkWhere}[${i}]: needs string group, version and kind`);
      }
      return { group, version, kind };
    });
  }

  return out;
}

export function checkRefs(definitions: ReadonlyMap<string, K8sSchema>): void {
  const visit = (schema: K8sSchema, where: string): void => {
    if (schema.$ref !== undefined) {
      const target = refNameAt(schema.$ref, where);
      if (!definitions.has(target)) throw new Error(`schema source: unresolved $ref "${schema.$ref}" at ${where}`);
      return;
    }
    if (schema.items !== undefined) visit(schema.items, `${where}.items`);
    for (const [key, value] of Object.entries(schema.properties ?? {})) visit(value, `${where}.properties.${key}`);
    if (typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, `${where}.additionalProperties`);
  };
  for (const [name, schema] of definitions) visit(schema, `definitions.${name}`);
}

function refNameAt(ref: string, where: string): string {
  try {
    return refName(ref);
  } catch (e) {
    throw new Error(`schema source ${where}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

export function asRecord(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`schema source ${where}: must be a mapping`);
  }
  return value as Record<string, unknown>;
}

export function checkKeys(record: Record<string, unknown>, allowed: ReadonlySet<string>, where: string): void {
  for (const key of Object.keys(record)) {
    if (!allowed.has(key)) throw new Error(`schema source ${where}: unknown key "${key}"`);
  }
}

export function optionalString(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Error(`schema source ${where}: must be a string`);
  return value;
}

function stringList(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v): v is string => typeof v === 'string')) {
    throw new Error(`schema source ${where}: must be a non-empty list of strings`);
  }
  if (new Set(value).size !== value.length) throw new Error(`schema source ${where}: duplicate entries`);
  return value;
}

function jsonValue(value: unknown, where: string): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Array.isArray(value)) return value.map((v: unknown, i) => jsonValue(v, `${where}[${i}]`));
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonValue(v, `${where}.${k}`)]));
  }
  throw new Error(`schema source ${where}: not a JSON value`);
}

