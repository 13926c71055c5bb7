/**
 * Request attributes derived from the URL and method, with the same rules as
 * k8s.io/apiserver's RequestInfoFactory, so that what we authorize is
 * exactly what kube-apiserver would authorize for the same request.
 */

export interface ResourceRequestInfo {
  readonly isResourceRequest: true;
  readonly path: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /** Path segments after the resource (name, subresource), for routing. */
  readonly parts: readonly string[];
}

export interface NonResourceRequestInfo {
  readonly isResourceRequest: false;
  readonly path: string;
  /** Lower-cased HTTP method, as kube uses for non-resource URLs. */
  readonly verb: string;
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

const apiPrefix = 'apis';
const namespaceSubresources = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const nonResource: NonResourceRequestInfo = { isResourceRequest: false, path, verb: method.toLowerCase() };
  const segments = splitPath(path);
  if (segments[0] !== apiPrefix || segments.length < 4) return nonResource;
  let rest = segments.slice(1);
  const apiGroup = rest[0] ?? '';
  const apiVersion = rest[1] ?? '';
  rest = rest.slice(2);

  let verb = methodVerb(method);
  // Deprecated /watch/ prefix: kube still maps it to the watch verb.
  if (rest[0] === 'watch') {
    verb = 'watch';
    rest = rest.slice(1);
  }

  let namespace = '';
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) namespace = rest[1] ?? '';
    // /namespaces/<ns> is the namespace object itself; deeper paths are namespaced resources.
    rest = rest.length > 2 && !namespaceSubresources.has(rest[2] ?? '') ? rest.slice(2) : rest;
  }

  const resource = rest[0] ?? '';
  const name = rest[1] ?? '';
  const subresource = rest.length > 2 ? (rest[2] ?? '') : '';

  if (name === '' && verb === 'get') verb = isWatch(url) ? 'watch' : 'list';
  if (name === '' && verb === 'delete') verb = 'deletecollection';

  return {
    isResourceRequest: true,
    path,
    verb,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name: name !== '' ? name : selectedName(verb, url),
    parts: rest.slice(1),
  };
}

function splitPath(path: string): string[] {
  return path.replace(/^\/+|\/+$/g, '').split('/').filter((s) => s !== '');
}

function methodVerb(method: string): string {
  switch (method.toUpperCase()) {
    case 'POST':
      return 'create';
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return '';
  }
}

function isWatch(url: URL): boolean {
  const value = url.searchParams.get('watch');
  return value !== null && value !== '0' && value.toLowerCase() !== 'false';
}

/**
 * A list or watch restricted by `metadata.name=<n>` is about one object: kube
 * records the name so RBAC resourceNames rules apply to it.
 */
function selectedName(verb: string, url: URL): string {
  if (verb !== 'list' && verb !== 'watch') return '';
  const selector = url.searchParams.get('fieldSelector');
  if (selector === null) return '';
  for (const term of selector.split(',')) {
    const match = /^\s*metadata\.name\s*==?\s*(\S+?)\s*$/.exec(term);
    const name = match?.[1];
    if (name !== undefined && isPathSegmentName(name)) return name;
  }
  return '';
}

function isPathSegmentName(name: string): boolean {
  return name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}
