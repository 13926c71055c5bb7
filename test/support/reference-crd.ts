/**
 * The reference for protocol details: kube-apiserver serving HostClaim as a
 * plain CustomResourceDefinition (same kind, plural, schema and status
 * subresource, group `reference.tenancy.test`), with the same RBAC for the
 * tenants as on tenancy.metal3.io. A test sends one request to both and
 * compares the answers after `fromReference` has renamed the group.
 */
import { loadSchemaSource } from '../../src/api/openapi/schema-source.js';
import { customResourceDefinition } from '../../src/backing/crd.js';
import type { DevEnvironment, Tenant } from '../controlplane/environment.js';
import { TENANTS } from '../controlplane/environment.js';
import { pollUntil } from '../controlplane/wait.js';

export const SERVED_GROUP = 'tenancy.metal3.io';
export const REFERENCE_GROUP = 'reference.tenancy.test';

/**
 * Installs the CRD and gives every tenant in its own namespace exactly what
 * deploy/base/aggregated-roles.yaml gives on ours (no status, no other verbs), so
 * authorization answers compare too. The opt-in cluster-wide-reads grant,
 * which the dev overlay applies, is removed: a CRD has no counterpart of it
 * (kube would list every namespace), so with it lists of all namespaces
 * could not compare (test/integration/cluster-wide-reads.test.ts covers it).
 */
export async function installReferenceCrd(env: DevEnvironment): Promise<void> {
  await withoutClusterWideReads(env);
  const crd = customResourceDefinition({
    group: REFERENCE_GROUP,
    version: 'v1alpha1',
    kind: 'HostClaim',
    plural: 'hostclaims',
    singular: 'hostclaim',
    schema: loadSchemaSource().resolvedObjectSchema('HostClaim'),
  });
  await env.controlPlane.apply(JSON.stringify(withSecretNameRules(crd)));
  await env.controlPlane.apply(TENANTS.map(tenantRbac).join('\n---\n'));
  await pollUntil(
    'the reference CRD to be served',
    async () => {
      const response = await env.controlPlane.request('GET', `/apis/${REFERENCE_GROUP}/v1alpha1/hostclaims`);
      return response.status === 200 ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

/** validation.IsDNS1123Subdomain's pattern, anchored, or empty (an empty name references nothing). */
export const SECRET_NAME_PATTERN = '^(|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$';

/**
 * A field naming a Secret must hold a Secret name, as core validation
 * requires of a SecretReference (ValidateSecretName: a DNS subdomain of at
 * most 253 characters); the server's HostClaim strategy checks it, and the
 * reference carries the same rule as a schema can. A pattern rather than a
 * CEL rule: with any CEL rule in its schema, a CRD adds "some validation
 * rules were not checked" to every answer with a blocking error, which the
 * server (no CRD) never says. The messages differ (the pattern's words, not
 * IsDNS1123Subdomain's); codes, reasons and fields are the same.
 */
function withSecretNameRules(crd: ReturnType<typeof customResourceDefinition>): ReturnType<typeof customResourceDefinition> {
  const copy = structuredClone(crd);
  const versions = (copy.spec as { versions: { schema: { openAPIV3Schema: SchemaNode } }[] }).versions;
  const spec = versions[0]?.schema.openAPIV3Schema.properties?.['spec'];
  const secretNames = [...['userData', 'networkData', 'metaData'].map((field) => spec?.properties?.[field]?.properties?.['name']), spec?.properties?.['image']?.properties?.['ociAuthSecretName']];
  for (const name of secretNames) {
    if (name === undefined) throw new Error('the HostClaim schema no longer has the Secret name fields the reference CRD constrains');
    Object.assign(name, { maxLength: 253, pattern: SECRET_NAME_PATTERN });
  }
  return copy;
}

interface SchemaNode {
  properties?: Record<string, SchemaNode | undefined>;
}

const CLUSTER_WIDE_READS = 'hostclaim-apiserver-cluster-wide-reads';

/** Deletes the grant's ClusterRoleBinding and waits until the aggregator refuses a tenant's list of all namespaces again. */
async function withoutClusterWideReads(env: DevEnvironment): Promise<void> {
  await env.controlPlane.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${CLUSTER_WIDE_READS}`);
  await pollUntil(
    'tenants to be refused lists of all namespaces',
    async () => {
      const result = await env.controlPlane.kubectl(['get', '--raw', `/apis/${SERVED_GROUP}/v1alpha1/hostclaims`], { kubeconfig: env.tenantKubeconfigPaths['tenant-a'] });
      return result.code !== 0 && result.stderr.includes('(Forbidden)') ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

function tenantRbac(tenant: Tenant): string {
  return `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reference-hostclaims, namespace: ${tenant}}
rules:
- apiGroups: [${REFERENCE_GROUP}]
  resources: [hostclaims]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reference-hostclaims, namespace: ${tenant}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reference-hostclaims}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: ${tenant}}`;
}

/**
 * The same request path on the reference CRD. kube-apiserver routes on the
 * path as Go decodes it (each `%XX` once, `%2F` included, hex digits in
 * either case), so every segment that decodes to our group is renamed,
 * written as it was: percent-encoded if any of it was, upper case if it was
 * (kube routes neither case variant anywhere, so both get kube's 404). The
 * reference request then reaches the CRD whenever ours would reach this
 * server, whatever else the path does (dot segments, `//`, an encoded
 * `apis`). The query is left as is.
 */
export function toReference(path: string): string {
  const queryAt = path.indexOf('?');
  const rawPath = queryAt < 0 ? path : path.slice(0, queryAt);
  const query = queryAt < 0 ? '' : path.slice(queryAt);
  // One character or one %XX escape per unit; segments end at a unit that decodes to '/'.
  const units = rawPath.match(/%[0-9a-fA-F]{2}|[^]/gu) ?? [];
  const segments: string[][] = [[]];
  for (const unit of units) {
    if (decodeUnit(unit) === '/') segments.push([unit]);
    else segments.at(-1)?.push(unit);
  }
  return segments.map(renameGroupSegment).join('') + query;
}

const decodeUnit = (unit: string): string => (unit.length === 3 && unit.startsWith('%') ? String.fromCharCode(Number.parseInt(unit.slice(1), 16)) : unit);
const percentEncodeAll = (text: string): string => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** A segment (its separator unit first, if any) with our group renamed to the reference group. */
function renameGroupSegment(units: readonly string[]): string {
  const first = units[0];
  const separator = first !== undefined && decodeUnit(first) === '/' ? first : '';
  const body = units.slice(separator === '' ? 0 : 1);
  const decoded = body.map(decodeUnit).join('');
  const group = decoded === SERVED_GROUP ? REFERENCE_GROUP : decoded === SERVED_GROUP.toUpperCase() ? REFERENCE_GROUP.toUpperCase() : undefined;
  if (group === undefined) return units.join('');
  return separator + (body.some((unit) => unit.length === 3 && unit.startsWith('%')) ? percentEncodeAll(group) : group);
}

/** A reference answer (Status, object, list) as it would read had our group served it. */
export function fromReference(text: string): string {
  return text.replaceAll(REFERENCE_GROUP, SERVED_GROUP);
}
