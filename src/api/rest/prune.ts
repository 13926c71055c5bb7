/**
 * Pruning is kube's (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/
 * pruning/algorithm.go): the root is an embedded resource (apiVersion, kind,
 * metadata are left to ObjectMeta decoding), x-kubernetes-preserve-unknown-fields
 * keeps what it covers, paths are reported sorted, `a.b[0].c`.
 */
import type { DecodedMap, DecodedValue, JsonValue } from './decoded-value.ts';

/** The part of a structural schema pruning reads. */
export interface PruneSchema {
  readonly properties?: Readonly<Record<string, PruneSchema>>;
  readonly additionalProperties?: boolean | PruneSchema;
  readonly items?: PruneSchema;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
}

const metaFields = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * `value` (the object a body decodes to) without the fields kube's pruning
 * removes, and their paths sorted as Go's sort.Strings sorts them. A copy:
 * YAML aliases share values, which may sit under different schemas. What
 * is not an object is no object of the kind, and left to the caller.
 */
export function pruneUnknownFields(value: DecodedValue, schema: PruneSchema, mergePatch = false): { value: JsonValue; unknownFields: string[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { value: plain(value), unknownFields: [] };
  const unknownFields: string[] = [];
  const result = prune(value, { ...schema, 'x-kubernetes-embedded-resource': true }, '', { unknownFields, mergePatch });
  return { value: result, unknownFields: sortedAsGo(unknownFields) };
}

/**
 * Strings in byte order, as Go's sort.Strings orders them. UTF-16 order (JavaScript's) is the same but for
 * characters beyond the BMP against U+E000–U+FFFF; only then are the strings compared as UTF-8.
 */
function sortedAsGo(texts: string[]): string[] {
  if (!texts.some((text) => /[\uD800-\uFFFF]/.test(text))) return texts.sort();
  return texts
    .map((text) => ({ text, bytes: Buffer.from(text) }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map(({ text }) => text);
}

interface Pruning {
  readonly unknownFields: string[];
  readonly mergePatch: boolean;
}

function prune(value: DecodedValue, schema: PruneSchema | undefined, path: string, pruning: Pruning): JsonValue {
  const preserve = schema?.['x-kubernetes-preserve-unknown-fields'] === true;
  if (Array.isArray(value)) {
    // Items of a preserved list are preserved too (kube's skipPrune).
    const items = preserve ? (schema.items === undefined ? undefined : { ...schema.items, 'x-kubernetes-preserve-unknown-fields': true }) : schema?.items;
    if (preserve && items === undefined) return plain(value);
    return value.map((item, index) => prune(item, items, `${path}[${index}]`, pruning));
  }
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, JsonValue> = {};
  const pruneField = (key: string, child: DecodedValue) => {
    const known = property(schema, key) ?? additional(schema);
    if (schema?.['x-kubernetes-embedded-resource'] === true && metaFields.has(key)) setField(result, key, plain(child));
    else if (known !== undefined) setField(result, key, prune(child, known, path === '' ? key : `${path}.${key}`, pruning));
    else if (preserve) setField(result, key, plain(child));
    else if (!(pruning.mergePatch && child === null)) pruning.unknownFields.push(path === '' ? key : `${path}.${key}`);
  };
  // Object.keys, not Object.entries: no pair allocated per field of a 100,000-field object.
  if (value instanceof Map) for (const [key, child] of value) pruneField(key, child);
  else for (const key of Object.keys(value)) pruneField(key, value[key] ?? null);
  return result;
}

/** The schema of a declared property; `constructor` and the like are fields, not Object.prototype's. */
function property(schema: PruneSchema | undefined, key: string): PruneSchema | undefined {
  const properties = schema?.properties;
  return properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : undefined;
}

/** `object[key] = value`, also for the key `__proto__`, which an assignment would take for the prototype. */
function setField(object: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

const plainMaps = new WeakMap<DecodedMap, JsonValue>();

/** A decoded value as JSON values: YAML's Maps as objects, each converted once however many aliases share it. */
export function plain(value: DecodedValue): JsonValue {
  if (Array.isArray(value)) return value.map(plain);
  if (!(value instanceof Map)) {
    // Scalars, and objects from JSON.parse, which hold no Map.
    return value as JsonValue;
  }
  const known = plainMaps.get(value);
  if (known !== undefined) return known;
  const result: Record<string, JsonValue> = {};
  for (const [key, child] of value) setField(result, key, plain(child));
  plainMaps.set(value, result);
  return result;
}

/** The schema of a map's values; `true` keeps whatever they hold. */
function additional(schema: PruneSchema | undefined): PruneSchema | undefined {
  const values = schema?.additionalProperties;
  if (values === undefined || values === false) return undefined;
  return values === true ? { 'x-kubernetes-preserve-unknown-fields': true } : values;
}
