/**
 * Pruning a JSON value to a resolved structural schema (SchemaSource.resolved*),
 * for projections of backing objects: the schema is the allow-list of what a
 * requester may see. Stricter than kube's pruning, which only drops unknown
 * fields: a value whose JSON type differs from the schema's is dropped too,
 * so nothing can be smuggled through a mistyped field. Values come out in the
 * schema's property order, so equal content always serializes identically.
 * A part of the value that pruning leaves as it is (nothing dropped, keys
 * already in that order) is returned itself, not copied: a pruned
 * BareMetalHost inventory shares the cached host's objects instead of
 * doubling them. Callers treat both as immutable.
 */
import type { K8sSchema } from './schema.js';

/** The value reduced to what the schema describes, or undefined when nothing of it fits. */
export function pruneToSchema(value: unknown, schema: K8sSchema): unknown {
  switch (schema.type) {
    case 'object':
      return pruneObject(value, schema);
    case 'array':
      return Array.isArray(value) && schema.items !== undefined ? pruneArray(value, schema.items) : undefined;
    case 'string':
      return typeof value === 'string' ? value : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
    case 'integer':
      return Number.isInteger(value) ? value : undefined;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
    case undefined:
      return undefined;
  }
}

function pruneObject(value: unknown, schema: K8sSchema): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const source = value as Record<string, unknown>;
  const entries = schema.properties !== undefined ? propertyEntries(source, schema.properties) : mapEntries(source, schema.additionalProperties);
  return unchanged(source, entries) ? source : Object.fromEntries(entries);
}

/** The pruned entries are the source's own, every value itself, in the source's key order. */
function unchanged(source: Record<string, unknown>, entries: readonly (readonly [string, unknown])[]): boolean {
  const keys = Object.keys(source);
  return keys.length === entries.length && entries.every(([key, value], index) => keys[index] === key && source[key] === value);
}

/** Each schema's properties as a list, built once: pruning runs per object (every host version), the schema never changes. */
const propertyLists = new WeakMap<Readonly<Record<string, K8sSchema>>, readonly (readonly [string, K8sSchema])[]>();

function propertyList(properties: Readonly<Record<string, K8sSchema>>): readonly (readonly [string, K8sSchema])[] {
  let list = propertyLists.get(properties);
  if (list === undefined) {
    list = Object.entries(properties);
    propertyLists.set(properties, list);
  }
  return list;
}

function propertyEntries(source: Record<string, unknown>, properties: Readonly<Record<string, K8sSchema>>): [string, unknown][] {
  const entries: [string, unknown][] = [];
  for (const [key, propertySchema] of propertyList(properties)) {
    if (!Object.hasOwn(source, key)) continue;
    const pruned = pruneToSchema(source[key], propertySchema);
    if (pruned !== undefined) entries.push([key, pruned]);
  }
  return entries;
}

/** A map (additionalProperties with a schema); without one, an object keeps nothing. */
function mapEntries(source: Record<string, unknown>, valueSchema: K8sSchema['additionalProperties']): [string, unknown][] {
  if (typeof valueSchema !== 'object') return [];
  return Object.keys(source)
    .sort()
    .map((key): [string, unknown] => [key, pruneToSchema(source[key], valueSchema)])
    .filter(([, pruned]) => pruned !== undefined);
}

function pruneArray(values: readonly unknown[], itemSchema: K8sSchema): unknown[] {
  const pruned = values.map((item) => pruneToSchema(item, itemSchema)).filter((item) => item !== undefined);
  return pruned.length === values.length && pruned.every((item, index) => item === values[index]) ? (values as unknown[]) : pruned;
}
