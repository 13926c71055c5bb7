/**
 * The one schema source: the YAML files under openapi/ at the project root,
 * loaded once, checked and exposed as typed, frozen K8sSchema definitions.
 *
 * The OpenAPI v2/v3 generators read it, and so can request validation and
 * field pruning: `resolvedObjectSchema('HostClaim')` gives the whole object
 * schema with every `$ref` inlined, like a CRD's structural openAPIV3Schema.
 *
 * Source format (see openapi/*.yaml): `definitions: {<name>: <schema>}`, plus
 * `group` and `version` in the file of a served group/version, whose
 * definitions must then all be named `<reversed group>.<version>.<Type>`
 * (kube's gvkToModelName, e.g. io.metal3.tenancy.v1alpha1.HostClaim).
 * References are written `#/definitions/<name>` and must all resolve.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { parse as parseYaml } from 'yaml';
import { projectRoot } from '../../project-root.js';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export type JsonScalar = string | number | boolean | null;
export type JsonValue = JsonScalar | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** The `x-kubernetes-*` keys a structural schema may carry. */
export interface K8sSchemaExtensions {
  readonly 'x-kubernetes-group-version-kind'?: readonly GroupVersionKind[];
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: 'atomic' | 'granular';
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
}

type ScalarSchemaKeys =
  | 'description'
  | 'format'
  | 'multipleOf'
  | 'maximum'
  | 'exclusiveMaximum'
  | 'minimum'
  | 'exclusiveMinimum'
  | 'maxLength'
  | 'minLength'
  | 'pattern'
  | 'maxItems'
  | 'minItems'
  | 'uniqueItems'
  | 'maxProperties'
  | 'minProperties'
  | 'nullable';

export type K8sSchemaType = OpenAPIV3.NonArraySchemaObjectType | OpenAPIV3.ArraySchemaObjectType;

/**
 * A schema node of the source: the structural subset of an OpenAPI v3 schema
 * object plus the `x-kubernetes-*` extensions. A node is either a reference
 * (`$ref`, optionally with a `description`) or a typed schema.
 */
export type K8sSchema = Readonly<Pick<OpenAPIV3.BaseSchemaObject, ScalarSchemaKeys>> &
  K8sSchemaExtensions & {
    readonly $ref?: string;
    readonly type?: K8sSchemaType;
    readonly items?: K8sSchema;
    readonly properties?: Readonly<Record<string, K8sSchema>>;
    readonly additionalProperties?: boolean | K8sSchema;
    readonly required?: readonly string[];
    readonly enum?: readonly JsonScalar[];
    readonly default?: JsonValue;
  };

export interface SchemaSource {
  /** The served group/version the source describes. */
  readonly group: string;
  readonly version: string;
  /** Every definition by its full name, in source order; values are frozen. */
  readonly definitions: ReadonlyMap<string, K8sSchema>;
  /** Full definition name of one of our types: "HostClaim" → "io.metal3.tenancy.v1alpha1.HostClaim". */
  definitionName(typeName: string): string;
  /** A definition by full name; throws if absent. */
  definition(name: string): K8sSchema;
  /** The definition of one of our types by short name (a descriptor's schemaName) or full name; throws if absent. */
  objectSchema(schemaName: string): K8sSchema;
  /** Follows `$ref` to the referenced definition; a typed node is returned as is. */
  deref(schema: K8sSchema): K8sSchema;
  /** A definition with every `$ref` inlined (no `$ref` left anywhere); memoized. */
  resolved(name: string): K8sSchema;
  /** objectSchema(schemaName), fully inlined: the structural schema for validation and pruning. */
  resolvedObjectSchema(schemaName: string): K8sSchema;
}

/** A YAML document of the source, by file name (for messages) and text. */
export interface SchemaSourceFile {
  readonly name: string;
  readonly text: string;
}

export const DEFINITIONS_REF_PREFIX = '#/definitions/';

/** The files of the source, under openapi/ at the project root; the first one holds the meta types. */
export const SCHEMA_SOURCE_FILES = ['meta.v1.yaml', 'tenancy.metal3.io_v1alpha1.yaml'] as const;

export function refTo(name: string): string {
  return `${DEFINITIONS_REF_PREFIX}${name}`;
}

/** Name of the definition a source `$ref` points at; throws on anything but `#/definitions/<name>`. */
export function refName(ref: string): string {
  if (!ref.startsWith(DEFINITIONS_REF_PREFIX) || ref.length === DEFINITIONS_REF_PREFIX.length) {
    throw new Error(`unsupported $ref "${ref}": expected "${DEFINITIONS_REF_PREFIX}<name>"`);
  }
  return ref.slice(DEFINITIONS_REF_PREFIX.length);
}

/** kube's gvkToModelName prefix: group parts reversed, then the version ("io.metal3.tenancy.v1alpha1"). */
export function modelNamePrefix(group: string, version: string): string {
  return [...group.split('.').reverse(), version].join('.');
}

let loaded: SchemaSource | undefined;

/** The schema source of this project, read from <project root>/openapi once per process. */
export function loadSchemaSource(): SchemaSource {
  loaded ??= readSchemaSource(join(projectRoot(), 'openapi'));
  return loaded;
}

/** Reads and checks the source files from a directory (not memoized). */
export function readSchemaSource(directory: string): SchemaSource {
  return parseSchemaSource(
    SCHEMA_SOURCE_FILES.map((name) => {
      const path = join(directory, name);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        throw new Error(`schema source: cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      return { name: path, text };
    }),
  );
}

/**
 * Parses and checks source documents: known keys only, structural nodes,
 * consistent `required`/list markers, definition names and GVKs matching the
 * file's group/version, and every `$ref` resolving. Exactly one file must
 * declare `group` and `version`. Throws an Error naming the file and path.
 */
export function parseSchemaSource(files: readonly SchemaSourceFile[]): SchemaSource {
  const definitions = new Map<string, K8sSchema>();
  let gv: { group: string; version: string } | undefined;

  for (const file of files) {
    let doc: unknown;
    try {
      doc = parseYaml(file.text);
    } catch (e) {
      throw new Error(`schema source ${file.name}: invalid YAML: ${e instanceof Error ? e.message : String(e)}`, {
        cause: e,
      });
    }
    const root = asRecord(doc, file.name);
    checkKeys(root, new Set(['group', 'version', 'definitions']), file.name);
    const group = optionalString(root['group'], `${file.name}: group`);
    const version = optionalString(root['version'], `${file.name}: version`);
    if ((group === undefined) !== (version === undefined)) {
      throw new Error(`schema source ${file.name}: group and version must be given together`);
    }
    if (group !== undefined && version !== undefined) {
      if (gv !== undefined) throw new Error(`schema source ${file.name}: a second file declares a group/version`);
      gv = { group, version };
    }
    const prefix = group !== undefined && version !== undefined ? `${modelNamePrefix(group, version)}.` : undefined;
    const defs = asRecord(root['definitions'], `${file.name}: definitions`);
    for (const [name, value] of Object.entries(defs)) {
      const where = `${file.name}: definitions.${name}`;
      if (definitions.has(name)) throw new Error(`schema source ${where}: duplicate definition`);
      if (prefix !== undefined && (!name.startsWith(prefix) || name.length === prefix.length)) {
        throw new Error(`schema source ${where}: definitions of ${group ?? ''}/${version ?? ''} must be named ${prefix}<Type>`);
      }
      const schema = parseSchema(value, where);
      if (prefix !== undefined && group !== undefined && version !== undefined) {
        for (const gvk of schema['x-kubernetes-group-version-kind'] ?? []) {
          if (gvk.group !== group || gvk.version !== version) {
            throw new Error(`schema source ${where}: x-kubernetes-group-version-kind ${gvk.group}/${gvk.version} is not ${group}/${version}`);
          }
        }
      }
      definitions.set(name, deepFreeze(schema));
    }
  }
  if (gv === undefined) throw new Error('schema source: no file declares the served group and version');
  checkRefs(definitions);
  return new Source(gv.group, gv.version, definitions);
}

class Source implements SchemaSource {
  private readonly prefix: string;
  private readonly resolvedCache = new Map<string, K8sSchema>();

  constructor(
    readonly group: string,
    readonly version: string,
    readonly definitions: ReadonlyMap<string, K8sSchema>,
  ) {
    this.prefix = `${modelNamePrefix(group, version)}.`;
  }

  definitionName(typeName: string): string {
    return typeName.startsWith(this.prefix) ? typeName : `${this.prefix}${typeName}`;
  }

  definition(name: string): K8sSchema {
    const schema = this.definitions.get(name);
    if (schema === undefined) throw new Error(`schema source: no definition "${name}"`);
    return schema;
  }

  objectSchema(schemaName: string): K8sSchema {
    return this.definition(this.definitionName(schemaName));
  }

  deref(schema: K8sSchema): K8sSchema {
    let current = schema;
    for (let hops = 0; current.$ref !== undefined; hops++) {
      if (hops > this.definitions.size) throw new Error(`schema source: $ref cycle through ${current.$ref}`);
      current = this.definition(refName(current.$ref));
    }
    return current;
  }

  resolved(name: string): K8sSchema {
    const cached = this.resolvedCache.get(name);
    if (cached !== undefined) return cached;
    const result = deepFreeze(this.inline(this.definition(name), [name]));
    this.resolvedCache.set(name, result);
    return result;
  }

  resolvedObjectSchema(schemaName: string): K8sSchema {
    return this.resolved(this.definitionName(schemaName));
  }

  private inline(schema: K8sSchema, stack: readonly string[]): K8sSchema {
    if (schema.$ref !== undefined) {
      const target = refName(schema.$ref);
      if (stack.includes(target)) throw new Error(`schema source: recursive $ref ${[...stack, target].join(' → ')}`);
      const inlined = this.inline(this.definition(target), [...stack, target]);
      return schema.description === undefined ? inlined : { ...inlined, description: schema.description };
    }
    const out: Mutable<K8sSchema> = { ...schema };
    if (schema.items !== undefined) out.items = this.inline(schema.items, stack);
    if (schema.properties !== undefined) {
      out.properties = Object.fromEntries(
        Object.entries(schema.properties).map(([key, value]) => [key, this.inline(value, stack)]),
      );
    }
    if (typeof schema.additionalProperties === 'object') {
      out.additionalProperties = this.inline(schema.additionalProperties, stack);
    }
    return out;
  }
}

// ---------------------------------------------------------------- checking

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

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

function parseSchema(value: unknown, where: string): K8sSchema {
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

function checkRefs(definitions: ReadonlyMap<string, K8sSchema>): void {
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

function asRecord(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`schema source ${where}: must be a mapping`);
  }
  return value as Record<string, unknown>;
}

function checkKeys(record: Record<string, unknown>, allowed: ReadonlySet<string>, where: string): void {
  for (const key of Object.keys(record)) {
    if (!allowed.has(key)) throw new Error(`schema source ${where}: unknown key "${key}"`);
  }
}

function optionalString(value: unknown, where: string): string | undefined {
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

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
