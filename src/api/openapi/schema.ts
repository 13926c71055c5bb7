/**
 * The types of the schema source (schema-source.ts) and its references: a
 * node is the structural subset of an OpenAPI v3 schema plus kube's
 * `x-kubernetes-*` extensions; a reference is `#/definitions/<name>`.
 */
import type { OpenAPIV3 } from 'openapi-types';

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

export const DEFINITIONS_REF_PREFIX = '#/definitions/';

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
