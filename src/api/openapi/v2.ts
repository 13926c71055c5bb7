/**
 * The OpenAPI v2 (Swagger 2.0) document of one group/version, as served at
 * /openapi/v2. The aggregator downloads it every minute, keeps the paths under
 * /apis/<group>/<version>/ and merges it into kube-apiserver's /openapi/v2,
 * which kubectl uses for client-side validation and, when v3 is unavailable,
 * to choose the patch type of client-side apply (PATCH `consumes`).
 */
import type { OpenAPIV2 } from 'openapi-types';
import type { ApiGroupVersion } from '../resource.js';
import { buildPaths, documentInfo, setOperation, type OperationSpec, type ParameterSpec } from './operations.js';
import { refName, refTo, type K8sSchema, type SchemaSource } from './schema.js';
import type { KubeOperationExtensions } from './v3.js';

export type V2Document = OpenAPIV2.Document<KubeOperationExtensions>;

export function buildOpenAPIV2(gv: ApiGroupVersion, source: SchemaSource): V2Document {
  const paths: OpenAPIV2.PathsObject<KubeOperationExtensions> = {};
  for (const spec of buildPaths(gv, source)) {
    const item: OpenAPIV2.PathItemObject<KubeOperationExtensions> = {};
    if (spec.parameters.length > 0) item.parameters = spec.parameters.map(toV2Parameter);
    for (const op of spec.operations) setOperation(item, op.method, toV2Operation(op));
    paths[spec.path] = item;
  }
  const definitions: OpenAPIV2.DefinitionsObject = {};
  for (const [name, schema] of source.definitions) definitions[name] = toV2Schema(schema);
  return { swagger: '2.0', info: documentInfo(gv), paths, definitions };
}

/** A source schema node in v2 form (a `$ref` keeps its description next to it, as kube's v2 does). */
export function toV2Schema(schema: K8sSchema): OpenAPIV2.SchemaObject {
  if (schema.$ref !== undefined) {
    const ref = refTo(refName(schema.$ref));
    return schema.description === undefined ? { $ref: ref } : { $ref: ref, description: schema.description };
  }
  const {
    $ref: _ref,
    nullable: _nullable, // not part of Swagger 2.0
    items,
    properties,
    additionalProperties,
    required,
    enum: values,
    'x-kubernetes-group-version-kind': gvks,
    'x-kubernetes-list-map-keys': mapKeys,
    ...scalars
  } = schema;
  const out: OpenAPIV2.SchemaObject = { ...scalars };
  if (required !== undefined) out.required = [...required];
  if (values !== undefined) out.enum = [...values];
  if (gvks !== undefined) out['x-kubernetes-group-version-kind'] = gvks.map((g) => ({ ...g }));
  if (mapKeys !== undefined) out['x-kubernetes-list-map-keys'] = [...mapKeys];
  if (items !== undefined) out.items = toV2Items(items);
  if (properties !== undefined) {
    out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, toV2Schema(v)]));
  }
  if (additionalProperties !== undefined) {
    out.additionalProperties =
      typeof additionalProperties === 'boolean' ? additionalProperties : toV2Schema(additionalProperties);
  }
  return out;
}

function toV2Items(schema: K8sSchema): OpenAPIV2.ItemsObject | OpenAPIV2.ReferenceObject {
  const converted = toV2Schema(schema);
  const { $ref, type } = converted;
  if (typeof $ref === 'string') return { ...converted, $ref };
  if (typeof type !== 'string') throw new Error('OpenAPI v2: array items need a type');
  return { ...converted, type };
}

function toV2Parameter(param: ParameterSpec): OpenAPIV2.GeneralParameterObject {
  return {
    name: param.name,
    in: param.in,
    description: param.description,
    ...(param.required ? { required: true } : {}),
    type: param.type,
  };
}

function toV2Operation(op: OperationSpec): OpenAPIV2.OperationObject<KubeOperationExtensions> {
  const responses: OpenAPIV2.ResponsesObject = {};
  for (const r of op.responses) {
    responses[String(r.code)] =
      r.definition === undefined
        ? { description: r.description }
        : { description: r.description, schema: { $ref: refTo(r.definition) } };
  }
  const parameters: OpenAPIV2.Parameters = op.parameters.map(toV2Parameter);
  const operation: OpenAPIV2.OperationObject<KubeOperationExtensions> = {
    tags: [...op.tags],
    description: op.description,
    operationId: op.operationId,
    produces: [...op.produces],
    schemes: ['https'],
    responses,
    'x-kubernetes-action': op.action,
    'x-kubernetes-group-version-kind': { ...op.gvk },
  };
  if (op.body !== undefined) {
    operation.consumes = [...op.body.contentTypes];
    const body: OpenAPIV2.InBodyParameterObject = {
      name: 'body',
      in: 'body',
      required: op.body.required,
      schema: { $ref: refTo(op.body.definition) },
    };
    parameters.unshift(body);
  }
  if (parameters.length > 0) operation.parameters = parameters;
  return operation;
}
