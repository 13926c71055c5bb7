/**
 * Request attributes derived from the decoded path (request-url.ts) and the
 * method, with the rules of k8s.io/apiserver's RequestInfoFactory
 * (pkg/endpoints/request/requestinfo.go), so that what we authorize and
 * serve is exactly what kube-apiserver authorized for the same request.
 * Name validation follows apimachinery's content.IsPathSegmentName.
 */
import { parseFieldSelector } from './field-selector.js';
import { goQuote } from './go-strings.js';
import { parseLabelSelector } from './label-selector.js';
import { badRequest } from './status.js';
import type { RequestUrl } from './request-url.js';

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

const apiPrefixes = new Set(['api', 'apis']);
const grouplessApiPrefixes = new Set(['api']);
/** Verbs named by a path prefix (`/watch/`, `/proxy/`); proxy has no subresources. */
const specialVerbs = new Set(['proxy', 'watch']);
const namespaceSubresources = new Set(['status', 'finalize']);

/**
 * RequestInfoFactory.NewRequestInfo on the decoded path. Throws a 400 where
 * kube fails to build a RequestInfo (`/apis/<g>/<v>/watch`), which kube
 * answers with a 500 before any handler runs.
 */
export function parseRequestInfo(method: string, url: RequestUrl): RequestInfo {
  const path = url.pathname;
  const nonResource: NonResourceRequestInfo = { isResourceRequest: false, path, verb: method.toLowerCase() };
  let parts = splitPath(path);
  const prefix = parts[0] ?? '';
  if (parts.length < 3 || !apiPrefixes.has(prefix)) return nonResource;
  parts = parts.slice(1);
  let apiGroup = '';
  if (!grouplessApiPrefixes.has(prefix)) {
    if (parts.length < 3) return nonResource;
    apiGroup = parts[0] ?? '';
    parts = parts.slice(1);
  }
  const apiVersion = parts[0] ?? '';
  parts = parts.slice(1);

  let verb = methodVerb(method);
  const pathVerb = parts[0] ?? '';
  if (specialVerbs.has(pathVerb)) {
    if (parts.length < 2) throw badRequest(`unable to determine kind and namespace from url, ${path}`);
    verb = pathVerb;
    parts = parts.slice(1);
  }

  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1] ?? '';
    // /namespaces/<ns>[/status|/finalize] is the namespace object itself; deeper paths are namespaced resources.
    if (parts.length > 2 && !namespaceSubresources.has(parts[2] ?? '')) parts = parts.slice(2);
  }

  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = parts.length >= 3 && verb !== 'proxy' ? (parts[2] ?? '') : '';

  if (name === '' && verb === 'get') {
    const options = listOptions(url.searchParams);
    verb = options.watch ? 'watch' : 'list';
    name = options.selectedName;
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';

  return { isResourceRequest: true, path, verb, apiGroup, apiVersion, namespace, resource, subresource, name, parts };
}

/** strings.Trim(path, "/") then strings.Split: inner empty segments are kept, as kube keeps them. */
export function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? [] : trimmed.split('/');
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

interface ListOptionsInfo {
  readonly watch: boolean;
  /** A `metadata.name=<n>` field selector names the object, so RBAC resourceNames rules apply to it. */
  readonly selectedName: string;
}

/**
 * What kube reads from ListOptions for the RequestInfo. Like kube, a query
 * that does not decode as ListOptions names no object, and only its first
 * `watch` value decides between list and watch.
 */
function listOptions(query: URLSearchParams): ListOptionsInfo {
  const watch = isTrue(query.get('watch'));
  try {
    for (const integer of ['limit', 'timeoutSeconds']) {
      const value = query.get(integer);
      if (value !== null && !/^[+-]?\d{1,18}$/.test(value)) return { watch, selectedName: '' };
    }
    parseLabelSelector(query.get('labelSelector') ?? '');
    const name = parseFieldSelector(query.get('fieldSelector') ?? '', 'any').requiresExactMatch('metadata.name');
    return { watch, selectedName: name !== undefined && pathSegmentNameErrors(name).length === 0 ? name : '' };
  } catch {
    return { watch, selectedName: '' };
  }
}

/** Go's query conversion to bool: anything but "false" and "0" (any case) is true, even "". */
function isTrue(value: string | null): boolean {
  return value !== null && value.toLowerCase() !== 'false' && value !== '0';
}

/**
 * content.IsPathSegmentName: names that cannot be a path segment (or an
 * etcd key segment). kube refuses them in its storage key functions with
 * `Name parameter invalid: "<name>": <errors joined by ";">`.
 */
export function pathSegmentNameErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/** kube's NamespaceKeyFunc check on the name of a single-object request. */
export function checkPathSegmentName(name: string): void {
  const errors = pathSegmentNameErrors(name);
  if (errors.length > 0) throw badRequest(`Name parameter invalid: ${goQuote(name)}: ${errors.join(';')}`);
}
