/**
 * The OpenAPI v3 document of one group/version, as served at
 * /openapi/v3/apis/<group>/<version>: paths for the declared verbs and every
 * definition of the schema source under components.schemas.
 *
 * Only plain OpenAPI 3.0 fields are used (plus `x-kubernetes-*`), so the
 * document round-trips through kube-openapi's spec3 types; no empty lists or
 * maps are emitted for the same reason. A `$ref` carrying a description is
 * wrapped as `allOf: [{$ref}]`, as kube-openapi does, since siblings of a
 * `$ref` are ignored in OpenAPI 3.0.
 */
import type { OpenAPIV3 } from 'openapi-types';
import type { ApiGroupVersion } from '../resource.js';
import { buildPaths, documentInfo, setOperation, type KubeAction, type OperationSpec, type ParameterSpec } from './operations.js';
import { refName, type GroupVersionKind, type K8sSchema, type K8sSchemaExtensions, type SchemaSource } from './schema.js';

export const V3_REF_PREFIX = '#/components/schemas/';

/** Extensions kube puts on every operation; kubectl explain and apply look for the GVK. */
export interface KubeOperationExtensions {
  'x-kubernetes-action': KubeAction;
  'x-kubernetes-group-version-kind': GroupVersionKind;
}

export type V3Schema = OpenAPIV3.SchemaObject & K8sSchemaExtensions;
export type V3SchemaOrRef = OpenAPIV3.ReferenceObject | V3Schema;
export type V3Document = OpenAPIV3.Document<KubeOperationExtensions>;

export function buildOpenAPIV3(gv: ApiGroupVersion, source: SchemaSource): V3Document {
  const paths: OpenAPIV3.PathsObject<KubeOperationExtensions> = {};
  for (const spec of buildPaths(gv, source)) {
    const item: OpenAPIV3.PathItemObject<KubeOperationExtensions> = {};
    if (spec.parameters.length > 0) item.parameters = spec.parameters.map(toV3Parameter);
    for (const op of spec.operations) setOperation(item, op.method, toV3Operation(op));
    paths[spec.path] = item;
  }
  const schemas: Record<string, V3SchemaOrRef> = {};
  for (const [name, schema] of source.definitions) schemas[name] = toV3Schema(schema);
  return { openapi: '3.0.0', info: documentInfo(gv), paths, components: { schemas } };
}

export function v3Ref(definition: string): string {
  return `${V3_REF_PREFIX}${definition}`;
}

/** A source schema node in v3 form: refs rewritten to components, described refs wrapped in allOf. */
export function toV3Schema(schema: K8sSchema): V3SchemaOrRef {
  if (schema.$ref !== undefined) {
    const ref: OpenAPIV3.ReferenceObject = { $ref: v3Ref(refName(schema.$ref)) };
    return schema.description === undefined ? ref : { allOf: [ref], description: schema.description };
  }
  const {
    $ref: _ref,
    type,
    items,
    properties,
    additionalProperties,
    required,
    enum: values,
    'x-kubernetes-group-version-kind': gvks,
    'x-kubernetes-list-map-keys': mapKeys,
    ...scalars
  } = schema;
  const common: OpenAPIV3.BaseSchemaObject & K8sSchemaExtensions = {
    ...scalars,
    ...(gvks === undefined ? {} : { 'x-kubernetes-group-version-kind': gvks.map((g) => ({ ...g })) }),
    ...(mapKeys === undefined ? {} : { 'x-kubernetes-list-map-keys': [...mapKeys] }),
  };
  if (required !== undefined) common.required = [...required];
  if (values !== undefined) common.enum = [...values];
  if (properties !== undefined) {
    common.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, toV3Schema(v)]));
  }
  if (additionalProperties !== undefined) {
    common.additionalProperties =
      typeof additionalProperties === 'boolean' ? additionalProperties : toV3Schema(additionalProperties);
  }
  if (type === 'array') {
    if (items === undefined) throw new Error('OpenAPI v3: array schema without items');
    return { ...common, type, items: toV3Schema(items) };
  }
  return type === undefined ? common : { ...common, type };
}

function toV3Parameter(param: ParameterSpec): OpenAPIV3.ParameterObject {
  return {
    name: param.name,
    in: param.in,
    description: param.description,
    ...(param.required ? { required: true } : {}),
    schema: { type: param.type },
  };
}

function toV3Operation(op: OperationSpec): OpenAPIV3.OperationObject<KubeOperationExtensions> {
  const responses: OpenAPIV3.ResponsesObject = {};
  for (const r of op.responses) {
    const response: OpenAPIV3.ResponseObject = { description: r.description };
    const definition = r.definition;
    if (definition !== undefined) {
      response.content = Object.fromEntries(op.produces.map((t) => [t, { schema: { $ref: v3Ref(definition) } }]));
    }
    responses[String(r.code)] = response;
  }
  const operation: OpenAPIV3.OperationObject<KubeOperationExtensions> = {
    tags: [...op.tags],
    description: op.description,
    operationId: op.operationId,
    responses,
    'x-kubernetes-action': op.action,
    'x-kubernetes-group-version-kind': { ...op.gvk },
  };
  if (op.parameters.length > 0) operation.parameters = op.parameters.map(toV3Parameter);
  const body = op.body;
  if (body !== undefined) {
    operation.requestBody = {
      content: Object.fromEntries(body.contentTypes.map((t) => [t, { schema: { $ref: v3Ref(body.definition) } }])),
      ...(body.required ? { required: true } : {}),
    };
  }
  return operation;
}
