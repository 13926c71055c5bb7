// JSON schemas for kubeconform, written from a kube-apiserver's /openapi/v2
// (no network: the schemas kubeconform would otherwise download from
// GitHub are generated from the test control plane, CRDs included). Each
// kind gets one self-contained Draft 4 schema, strict like kubeconform's
// `-strict` schemas (openapi2jsonschema --strict): an object with declared
// properties admits no other field. Layout, for kubeconform's
// `-schema-location <dir>/{{.Group}}/{{.ResourceAPIVersion}}/{{.ResourceKind}}.json`:
// `<group>/<version>/<kind, lower case>.json`, where kubeconform's Group of
// the core group's `apiVersion: v1` is `v1`.
import fs from 'node:fs/promises';
import path from 'node:path';

type Schema = Record<string, unknown>;

interface OpenAPIV2 {
  definitions: Record<string, Schema>;
}

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

const REF_PREFIX = '#/definitions/';
/** Strings or integers in kube (`port: https` or `port: 8443`). */
const INT_OR_STRING = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
/** Quantities are strings in OpenAPI, yet kube also accepts numbers (`cpu: 1`). */
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** Writes one schema per kind of the document into `dir`; returns how many. */
export async function writeKubeconformSchemas(openapi: OpenAPIV2, dir: string): Promise<number> {
  const definitions = Object.fromEntries(Object.entries(openapi.definitions).map(([name, schema]) => [name, strictSchema(name, schema)]));
  let written = 0;
  for (const [name, schema] of Object.entries(openapi.definitions)) {
    for (const gvk of groupVersionKinds(schema)) {
      const file = path.join(dir, gvk.group === '' ? 'v1' : gvk.group, gvk.version, `${gvk.kind.toLowerCase()}.json`);
      const root = definitions[name] ?? {};
      const document = { $schema: 'http://json-schema.org/draft-04/schema#', ...root, definitions: pick(definitions, referencedFrom(name, definitions)) };
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, JSON.stringify(document));
      written++;
    }
  }
  return written;
}

function groupVersionKinds(schema: Schema): GroupVersionKind[] {
  const gvks = schema['x-kubernetes-group-version-kind'];
  return Array.isArray(gvks) ? (gvks as GroupVersionKind[]) : [];
}

function strictSchema(name: string, schema: Schema): Schema {
  if (name === QUANTITY) return { description: schema['description'], oneOf: [{ type: 'string' }, { type: 'number' }] };
  return strict(schema) as Schema;
}

function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (node === null || typeof node !== 'object') return node;
  const schema = node as Schema;
  if (schema['format'] === 'int-or-string' || schema['x-kubernetes-int-or-string'] === true) {
    return { ...(schema['description'] === undefined ? {} : { description: schema['description'] }), ...INT_OR_STRING };
  }
  const result: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    // properties' keys are field names, not keywords.
    result[key] = key === 'properties' ? mapValues(value as Schema, strict) : strict(value);
  }
  const closed = result['properties'] !== undefined && result['additionalProperties'] === undefined && schema['x-kubernetes-preserve-unknown-fields'] !== true;
  return closed ? { ...result, additionalProperties: false } : result;
}

/** Every definition reachable by $ref from `name`, itself included. */
function referencedFrom(name: string, definitions: Record<string, Schema>): Set<string> {
  const seen = new Set<string>();
  const pending = [name];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    for (const ref of refs(definitions[next])) pending.push(ref);
  }
  return seen;
}

function refs(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refs);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' && value.startsWith(REF_PREFIX) ? [value.slice(REF_PREFIX.length)] : refs(value),
  );
}

function pick(definitions: Record<string, Schema>, names: Set<string>): Record<string, Schema> {
  return Object.fromEntries([...names].sort().map((name) => [name, definitions[name] ?? {}]));
}

function mapValues(object: Schema, fn: (value: unknown) => unknown): Schema {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, fn(value)]));
}
