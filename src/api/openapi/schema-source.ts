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
import { parse as parseYaml } from 'yaml';
import { projectRoot } from '../../project-root.js';
import { deepFreeze } from '../json-value.js';
import { asRecord, checkKeys, checkRefs, optionalString, parseSchema, type Mutable } from './schema-check.js';
import { modelNamePrefix, refName, type K8sSchema, type SchemaSource } from './schema.js';

/** A YAML document of the source, by file name (for messages) and text. */
export interface SchemaSourceFile {
  readonly name: string;
  readonly text: string;
}

/** The files of the source, under openapi/ at the project root; the first one holds the meta types. */
export const SCHEMA_SOURCE_FILES = ['meta.v1.yaml', 'tenancy.metal3.io_v1alpha1.yaml'] as const;

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
