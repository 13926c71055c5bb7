/**
 * Static description of a served resource: what discovery, OpenAPI,
 * request-info parsing and authorization need to know about it. Each resource
 * under src/resources/<kind> exports one of these; nothing else in src/api
 * names a concrete kind.
 */

/** The API verbs, as in kube's RequestInfo and in discovery documents. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface GroupVersion {
  readonly group: string;
  readonly version: string;
}

export interface SubresourceDescriptor {
  readonly name: string;
  /** Verbs really served on the subresource; empty until implemented. */
  readonly verbs: readonly Verb[];
}

export interface ResourceDescriptor {
  /** Plural, lower-case resource name used in URLs (e.g. "hostclaims"). */
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Verbs really served on the resource; discovery and OpenAPI advertise exactly these. */
  readonly verbs: readonly Verb[];
  readonly subresources: readonly SubresourceDescriptor[];
  /** Name of the object's schema in openapi/ (the one schema source). */
  readonly schemaName: string;
}

export interface ApiGroupVersion extends GroupVersion {
  readonly resources: readonly ResourceDescriptor[];
}

export function groupVersionString(gv: GroupVersion): string {
  return `${gv.group}/${gv.version}`;
}
