/**
 * The REST operations of a group/version, in one version-neutral model that
 * the v2 and v3 renderers turn into OpenAPI paths. Shapes follow what
 * kube-apiserver publishes for CRDs (apiextensions-apiserver
 * pkg/controller/openapi/builder): the same paths, operation IDs, tags,
 * `x-kubernetes-action` values and query parameters, with watch served through
 * the list operation's `watch` parameter (no legacy /watch/ paths).
 *
 * Only the verbs a ResourceDescriptor declares get an operation, so the
 * documents advertise exactly what the server serves.
 */
import type { ApiGroupVersion, ResourceDescriptor, Verb } from '../resource.js';
import type { GroupVersionKind, SchemaSource } from './schema.js';

/** Values of `x-kubernetes-action`, as kube-apiserver writes them. */
export type KubeAction = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection';
export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** Puts an operation on a v2 or v3 path item under its HTTP method. */
export function setOperation<O>(item: Partial<Record<HttpMethod, O>>, method: HttpMethod, operation: O): void {
  item[method] = operation;
}

export const JSON_MEDIA_TYPE = 'application/json';
export const WATCH_JSON_MEDIA_TYPE = 'application/json;stream=watch';

/**
 * PATCH body types advertised. Strategic merge patch is deliberately absent:
 * kubectl's client-side apply then sends JSON merge patches.
 */
export const PATCH_CONTENT_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];

export const STATUS_DEFINITION = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
export const DELETE_OPTIONS_DEFINITION = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
export const PATCH_DEFINITION = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
const GVK_EXTENSION = 'x-kubernetes-group-version-kind';

export interface ParameterSpec {
  readonly name: string;
  readonly in: 'path' | 'query';
  readonly description: string;
  readonly type: 'string' | 'integer' | 'boolean';
  readonly required: boolean;
}

export interface BodySpec {
  /** Full name of the body's definition. */
  readonly definition: string;
  readonly required: boolean;
  readonly contentTypes: readonly string[];
}

export interface ResponseSpec {
  readonly code: number;
  readonly description: string;
  /** Full name of the response body's definition; none for bodiless responses. */
  readonly definition?: string;
}

export interface OperationSpec {
  readonly method: HttpMethod;
  readonly operationId: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly action: KubeAction;
  readonly gvk: GroupVersionKind;
  /** Query parameters of this operation only (path-level ones are on the PathSpec). */
  readonly parameters: readonly ParameterSpec[];
  readonly body?: BodySpec;
  readonly responses: readonly ResponseSpec[];
  readonly produces: readonly string[];
}

export interface PathSpec {
  readonly path: string;
  /** Parameters shared by every operation of the path: path parameters and `pretty`. */
  readonly parameters: readonly ParameterSpec[];
  readonly operations: readonly OperationSpec[];
}

/** The operations of every resource of the group/version, for the verbs each one declares. */
export function buildPaths(gv: ApiGroupVersion, source: SchemaSource): PathSpec[] {
  checkSource(gv, source);
  const paths: PathSpec[] = [];
  for (const resource of gv.resources) paths.push(...resourcePaths(gv, resource, source));
  return paths.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Checks that the source has the object and list definitions of every
 * resource of the group/version, each carrying its GVK. Throws otherwise.
 */
export function checkSource(gv: ApiGroupVersion, source: SchemaSource): void {
  if (source.group !== gv.group || source.version !== gv.version) {
    throw new Error(`OpenAPI: schema source describes ${source.group}/${source.version}, not ${gv.group}/${gv.version}`);
  }
  for (const resource of gv.resources) {
    for (const [typeName, kind] of [
      [resource.schemaName, resource.kind],
      [resource.listKind, resource.listKind],
    ] as const) {
      const name = source.definitionName(typeName);
      const schema = source.definitions.get(name);
      if (schema === undefined) throw new Error(`OpenAPI: no definition ${name} for ${resource.plural}`);
      const gvks = schema[GVK_EXTENSION] ?? [];
      if (!gvks.some((g) => g.group === gv.group && g.version === gv.version && g.kind === kind)) {
        throw new Error(`OpenAPI: definition ${name} lacks ${GVK_EXTENSION} ${gv.group}/${gv.version} ${kind}`);
      }
    }
  }
}

// ------------------------------------------------------------------ paths

function resourcePaths(gv: ApiGroupVersion, resource: ResourceDescriptor, source: SchemaSource): PathSpec[] {
  const kindDef = source.definitionName(resource.schemaName);
  const listDef = source.definitionName(resource.listKind);
  const gvk: GroupVersionKind = { group: gv.group, version: gv.version, kind: resource.kind };
  const ids = operationNaming(gv);
  const kind = resource.kind;
  const scope = resource.namespaced ? 'Namespaced' : '';
  const verbs = new Set<Verb>(resource.verbs);
  const groupRoot = `/apis/${gv.group}/${gv.version}`;
  const collection = resource.namespaced
    ? `${groupRoot}/namespaces/{namespace}/${resource.plural}`
    : `${groupRoot}/${resource.plural}`;
  const item = `${collection}/{name}`;
  const common = { tags: [ids.tag], gvk };
  const namespaceParam = resource.namespaced ? [pathParam('namespace', 'Namespace of the objects.')] : [];
  const nameParam = pathParam('name', `Name of the ${kind}.`);
  const paths: PathSpec[] = [];

  const listOperation = (operationId: string): OperationSpec | undefined => {
    if (!verbs.has('list') && !verbs.has('watch')) return undefined;
    return {
      ...common,
      method: 'get',
      operationId,
      description: `list or watch objects of kind ${kind}`,
      action: 'list',
      parameters: sortParams([...LIST_PARAMS, ...(verbs.has('watch') ? WATCH_PARAMS : [])]),
      responses: [ok(listDef), UNAUTHORIZED],
      produces: verbs.has('watch') ? [JSON_MEDIA_TYPE, WATCH_JSON_MEDIA_TYPE] : [JSON_MEDIA_TYPE],
    };
  };

  // Cluster-wide list of a namespaced resource.
  if (resource.namespaced) {
    const all = listOperation(ids.id('list', `${kind}ForAllNamespaces`));
    if (all !== undefined) paths.push({ path: `${groupRoot}/${resource.plural}`, parameters: [PRETTY], operations: [all] });
  }

  const collectionOps: OperationSpec[] = [];
  const list = listOperation(ids.id('list', `${scope}${kind}`));
  if (list !== undefined) collectionOps.push(list);
  if (verbs.has('create')) {
    collectionOps.push({
      ...common,
      method: 'post',
      operationId: ids.id('create', `${scope}${kind}`),
      description: `create ${article(kind)} ${kind}`,
      action: 'post',
      parameters: sortParams(WRITE_PARAMS),
      body: { definition: kindDef, required: true, contentTypes: [JSON_MEDIA_TYPE] },
      responses: [ok(kindDef), { code: 201, description: 'Created', definition: kindDef }, accepted(kindDef), UNAUTHORIZED],
      produces: [JSON_MEDIA_TYPE],
    });
  }
  if (verbs.has('deletecollection')) {
    collectionOps.push({
      ...common,
      method: 'delete',
      operationId: ids.id('delete', `collection${scope}${kind}`),
      description: `delete collection of ${kind}`,
      action: 'deletecollection',
      parameters: sortParams([...DELETE_PARAMS, ...LIST_PARAMS]),
      body: { definition: DELETE_OPTIONS_DEFINITION, required: false, contentTypes: [JSON_MEDIA_TYPE] },
      responses: [ok(STATUS_DEFINITION), UNAUTHORIZED],
      produces: [JSON_MEDIA_TYPE],
    });
  }
  if (collectionOps.length > 0) {
    paths.push({ path: collection, parameters: sortParams([...namespaceParam, PRETTY]), operations: collectionOps });
  }

  const itemOps: OperationSpec[] = [];
  if (verbs.has('get')) itemOps.push(readOperation(common, ids.id('read', `${scope}${kind}`), kind, '', kindDef));
  if (verbs.has('update')) itemOps.push(replaceOperation(common, ids.id('replace', `${scope}${kind}`), kind, '', kindDef));
  if (verbs.has('patch')) itemOps.push(patchOperation(common, ids.id('patch', `${scope}${kind}`), kind, '', kindDef));
  if (verbs.has('delete')) {
    itemOps.push({
      ...common,
      method: 'delete',
      operationId: ids.id('delete', `${scope}${kind}`),
      description: `delete ${article(kind)} ${kind}`,
      action: 'delete',
      parameters: sortParams(DELETE_PARAMS),
      body: { definition: DELETE_OPTIONS_DEFINITION, required: false, contentTypes: [JSON_MEDIA_TYPE] },
      responses: [ok(STATUS_DEFINITION), accepted(STATUS_DEFINITION), UNAUTHORIZED],
      produces: [JSON_MEDIA_TYPE],
    });
  }
  const itemParams = sortParams([nameParam, ...namespaceParam, PRETTY]);
  if (itemOps.length > 0) paths.push({ path: item, parameters: itemParams, operations: itemOps });

  for (const sub of resource.subresources) {
    if (sub.verbs.length === 0) continue;
    if (sub.name !== 'status') {
      throw new Error(`OpenAPI: no schema known for subresource ${resource.plural}/${sub.name}`);
    }
    const subVerbs = new Set<Verb>(sub.verbs);
    const suffix = 'Status';
    const subOps: OperationSpec[] = [];
    if (subVerbs.has('get')) subOps.push(readOperation(common, ids.id('read', `${scope}${kind}${suffix}`), kind, 'status', kindDef));
    if (subVerbs.has('update')) {
      subOps.push(replaceOperation(common, ids.id('replace', `${scope}${kind}${suffix}`), kind, 'status', kindDef));
    }
    if (subVerbs.has('patch')) {
      subOps.push(patchOperation(common, ids.id('patch', `${scope}${kind}${suffix}`), kind, 'status', kindDef));
    }
    if (subOps.length > 0) paths.push({ path: `${item}/${sub.name}`, parameters: itemParams, operations: subOps });
  }
  return paths;
}

interface CommonFields {
  readonly tags: readonly string[];
  readonly gvk: GroupVersionKind;
}

function readOperation(common: CommonFields, operationId: string, kind: string, sub: string, def: string): OperationSpec {
  return {
    ...common,
    method: 'get',
    operationId,
    description: `read ${subOf(sub)}the specified ${kind}`,
    action: 'get',
    parameters: sortParams(GET_PARAMS),
    responses: [ok(def), UNAUTHORIZED],
    produces: [JSON_MEDIA_TYPE],
  };
}

function replaceOperation(common: CommonFields, operationId: string, kind: string, sub: string, def: string): OperationSpec {
  return {
    ...common,
    method: 'put',
    operationId,
    description: `replace ${subOf(sub)}the specified ${kind}`,
    action: 'put',
    parameters: sortParams(WRITE_PARAMS),
    body: { definition: def, required: true, contentTypes: [JSON_MEDIA_TYPE] },
    responses: [ok(def), { code: 201, description: 'Created', definition: def }, UNAUTHORIZED],
    produces: [JSON_MEDIA_TYPE],
  };
}

function patchOperation(common: CommonFields, operationId: string, kind: string, sub: string, def: string): OperationSpec {
  return {
    ...common,
    method: 'patch',
    operationId,
    description: `partially update ${subOf(sub)}the specified ${kind}`,
    action: 'patch',
    parameters: sortParams([...WRITE_PARAMS, FORCE]),
    body: { definition: PATCH_DEFINITION, required: true, contentTypes: PATCH_CONTENT_TYPES },
    responses: [ok(def), { code: 201, description: 'Created', definition: def }, UNAUTHORIZED],
    produces: [JSON_MEDIA_TYPE],
  };
}

function subOf(sub: string): string {
  return sub === '' ? '' : `${sub} of `;
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? 'an' : 'a';
}

function ok(definition: string): ResponseSpec {
  return { code: 200, description: 'OK', definition };
}

function accepted(definition: string): ResponseSpec {
  return { code: 202, description: 'Accepted', definition };
}

const UNAUTHORIZED: ResponseSpec = { code: 401, description: 'Unauthorized' };

// ------------------------------------------------------------- operation IDs

/** kube's operation naming (apiserver pkg/endpoints/openapi GetOperationIDAndTags). */
function operationNaming(gv: ApiGroupVersion): { tag: string; id: (verb: string, rest: string) => string } {
  const group = gv.group.endsWith('.k8s.io') ? gv.group.slice(0, -'.k8s.io'.length) : gv.group;
  const infix = toValidOperationID(group, true) + toValidOperationID(gv.version, true);
  return {
    tag: `${toValidOperationID(group, false)}_${toValidOperationID(gv.version, false)}`,
    id: (verb, rest) => `${verb}${infix}${toValidOperationID(rest, true)}`,
  };
}

/** Port of kube's ToValidOperationID: drops punctuation, camel-casing the letter after it. */
export function toValidOperationID(s: string, capitalizeFirstLetter: boolean): string {
  let out = '';
  let capitalize = capitalizeFirstLetter;
  let index = 0;
  for (const ch of s) {
    const isLetter = /\p{L}/u.test(ch);
    const isDigit = /\p{Nd}/u.test(ch);
    if (isLetter || ch === '_' || (index !== 0 && isDigit)) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else {
      capitalize = true;
    }
    index += ch.length;
  }
  return out;
}

// --------------------------------------------------------------- parameters

function pathParam(name: string, description: string): ParameterSpec {
  return { name, in: 'path', description, type: 'string', required: true };
}

function query(name: string, type: ParameterSpec['type'], description: string): ParameterSpec {
  return { name, in: 'query', description, type, required: false };
}

function sortParams(params: readonly ParameterSpec[]): ParameterSpec[] {
  return [...params].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const PRETTY = query('pretty', 'string', "If 'true', the output is pretty-printed.");

const DRY_RUN = query(
  'dryRun',
  'string',
  'When "All", the request is fully processed and validated but nothing is persisted.',
);
const FIELD_MANAGER = query(
  'fieldManager',
  'string',
  'Name of the actor making the change, recorded in managedFields; at most 128 printable characters.',
);
const FIELD_VALIDATION = query(
  'fieldValidation',
  'string',
  'What to do with unknown or duplicate fields in the body: "Ignore", "Warn" (default; warning headers) or "Strict" (400 error).',
);
const FORCE = query('force', 'boolean', 'For apply patches only: take ownership of fields owned by other managers instead of failing with a conflict.');
const WRITE_PARAMS = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];

const GET_PARAMS = [
  query('resourceVersion', 'string', 'Version constraint on the object returned; unset means the most recent.'),
];

const LIST_PARAMS = [
  query('labelSelector', 'string', 'Only return objects whose labels match this selector.'),
  query('fieldSelector', 'string', 'Only return objects whose fields match this selector (metadata.name, metadata.namespace).'),
  query('limit', 'integer', 'Maximum number of items to return; follow metadata.continue for the next page.'),
  query('continue', 'string', 'Token from a previous page (metadata.continue) to fetch the next one.'),
  query('resourceVersion', 'string', 'Version constraint on the data returned; see resourceVersionMatch.'),
  query('resourceVersionMatch', 'string', 'How resourceVersion applies: "NotOlderThan" or "Exact".'),
  query('timeoutSeconds', 'integer', 'Upper bound on the duration of the list or watch call.'),
];

const WATCH_PARAMS = [
  query('watch', 'boolean', 'Stream changes (ADDED, MODIFIED, DELETED events) instead of returning a list.'),
  query('allowWatchBookmarks', 'boolean', 'Allow BOOKMARK events carrying only a resourceVersion in the watch stream.'),
  query(
    'sendInitialEvents',
    'boolean',
    'With watch=true and resourceVersionMatch=NotOlderThan: start the stream with the current objects, then a BOOKMARK annotated k8s.io/initial-events-end.',
  ),
];

const DELETE_PARAMS = [
  DRY_RUN,
  query('gracePeriodSeconds', 'integer', 'Seconds to wait before the object is deleted; 0 means immediately.'),
  query('propagationPolicy', 'string', 'How dependents are garbage-collected: "Orphan", "Background" or "Foreground".'),
  query('orphanDependents', 'boolean', 'Deprecated, use propagationPolicy. When true, dependents are orphaned.'),
];

/** The `info` object of both documents. */
export function documentInfo(gv: ApiGroupVersion): { title: string; version: string } {
  return { title: `hostclaim-apiserver ${gv.group}`, version: gv.version };
}
