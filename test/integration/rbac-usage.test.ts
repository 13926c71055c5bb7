/**
 * No RBAC rule in deploy/ is unused by the suite, and the server was never
 * refused. Every control plane of the run audits the requests of
 * hostclaim-apiserver's ServiceAccount (test/controlplane/audit.ts); this
 * file runs last (test/integration/sequencer.ts) and maps every permission
 * of deploy/base/rbac.yaml's ClusterRole and Role (each API group ×
 * resource × verb × resource name of each rule) to at least one request
 * RBAC allowed, and each binding to a built-in role to a request it
 * allowed. A rule nothing uses is a privilege to remove (or, if a feature
 * the suite does not reach needs it, a test to add).
 *
 * The usage check needs the whole integration suite (`make integration`);
 * run with fewer files it is skipped, while the refusal check still runs on
 * what those files did.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { auditDir, readAuditedRequests, RUN_FILES, type AuditedRequest } from '../controlplane/audit.js';
import { repoPath } from '../controlplane/paths.js';

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface RbacObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: PolicyRule[];
  roleRef?: { kind: string; name: string };
}

/** One thing a rule allows: a verb on a resource (`resource/subresource`) of a group, optionally of one name. */
interface Permission {
  role: string;
  /** Undefined for a ClusterRole (any namespace). */
  namespace?: string;
  apiGroup: string;
  resource: string;
  verb: string;
  resourceName?: string;
}

const RBAC_FILE = repoPath('deploy', 'base', 'rbac.yaml');

function rbacObjects(text: string): RbacObject[] {
  return parseAllDocuments(text).map((document) => document.toJS() as RbacObject);
}

function permissions(objects: RbacObject[]): Permission[] {
  return objects
    .filter((object) => object.kind === 'ClusterRole' || object.kind === 'Role')
    .flatMap((role) =>
      (role.rules ?? []).flatMap((rule) =>
        (rule.apiGroups ?? []).flatMap((apiGroup) =>
          (rule.resources ?? []).flatMap((resource) =>
            rule.verbs.flatMap((verb) =>
              (rule.resourceNames ?? [undefined]).map((resourceName) => ({
                role: `${role.kind} ${role.metadata.namespace === undefined ? '' : `${role.metadata.namespace}/`}${role.metadata.name}`,
                ...(role.kind === 'Role' ? { namespace: role.metadata.namespace } : {}),
                apiGroup,
                resource,
                verb,
                ...(resourceName === undefined ? {} : { resourceName }),
              })),
            ),
          ),
        ),
      ),
    );
}

function allows(permission: Permission, request: AuditedRequest): boolean {
  const resource = request.subresource === '' ? request.resource : `${request.resource}/${request.subresource}`;
  return (
    request.decision === 'allow' &&
    permission.verb === request.verb &&
    permission.apiGroup === request.apiGroup &&
    permission.resource === resource &&
    (permission.namespace === undefined || permission.namespace === request.namespace) &&
    (permission.resourceName === undefined || permission.resourceName === request.name)
  );
}

/** kube's RBAC authorizer names the binding in its reason: `… by RoleBinding "name/namespace" of Role …`. */
function bindingReason(binding: RbacObject): string {
  const name = binding.metadata.namespace === undefined ? binding.metadata.name : `${binding.metadata.name}/${binding.metadata.namespace}`;
  return `${binding.kind} "${name}" of ${binding.roleRef?.kind ?? ''} "${binding.roleRef?.name ?? ''}"`;
}

function describeRequest(request: AuditedRequest): string {
  const resource = request.subresource === '' ? request.resource : `${request.resource}/${request.subresource}`;
  return `${request.verb} ${request.apiGroup}/${resource} ${request.namespace}/${request.name}`;
}

let requests: AuditedRequest[];
let wholeSuite: boolean;

beforeAll(async () => {
  const dir = auditDir();
  if (dir === undefined) throw new Error('no audit directory: run through vitest with test/integration/global-setup.ts');
  requests = await readAuditedRequests(dir);
  const ran = new Set((JSON.parse(await fs.readFile(path.join(dir, RUN_FILES), 'utf8')) as string[]).map((file) => path.basename(file)));
  const all = (await fs.readdir(repoPath('test', 'integration'))).filter((file) => file.endsWith('.test.ts'));
  wholeSuite = all.every((file) => ran.has(file));
});

describe('permissions in deploy/base/rbac.yaml', () => {
  it('expand to the expected rules', async () => {
    // A guard on the expansion itself: the ClusterRole's Secret rule has six verbs, the Role's two; the Lease rule one name.
    const all = permissions(rbacObjects(await fs.readFile(RBAC_FILE, 'utf8')));
    const secrets = all.filter((permission) => permission.resource === 'secrets');
    expect(secrets.filter((permission) => permission.role.startsWith('ClusterRole ')).map((permission) => permission.verb)).toEqual(['get', 'list', 'watch', 'create', 'update', 'delete']);
    // The continue-token key: create in the storage namespace, and get by name.
    expect(secrets.filter((permission) => permission.role.startsWith('Role ')).map((permission) => `${permission.verb} ${permission.resourceName ?? '*'}`)).toEqual([
      'create *',
      'get hostclaim-apiserver-continue-token-key',
    ]);
    // RBAC itself, read (never written) for the per-namespace read rule: list and watch of the four kinds, cluster-wide.
    expect(all.filter((permission) => permission.apiGroup === 'rbac.authorization.k8s.io').map((permission) => `${permission.role} ${permission.verb} ${permission.resource}`)).toEqual(
      ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'].flatMap((resource) => ['list', 'watch'].map((verb) => `ClusterRole hostclaim-apiserver ${verb} ${resource}`)),
    );
    const lease = { role: 'Role hostclaim-system/hostclaim-apiserver', namespace: 'hostclaim-system', apiGroup: 'coordination.k8s.io', resource: 'leases' };
    // The binder's Lease by name; the replicas' own Leases (replica-membership.ts) by their label, so not by name.
    expect(all.filter((permission) => permission.resource === 'leases')).toEqual([
      { ...lease, verb: 'create' },
      { ...lease, verb: 'get', resourceName: 'hostclaim-binder' },
      { ...lease, verb: 'update', resourceName: 'hostclaim-binder' },
      ...['list', 'watch', 'update', 'delete'].map((verb) => ({ ...lease, verb })),
    ]);
    // The one non-resource URL: peers' watermark rounds, which reach the server, not kube-apiserver (so no audit
    // event shows them; replica-reads.test.ts fails if a round is refused, since its reads would then probe).
    const nonResource = rbacObjects(await fs.readFile(RBAC_FILE, 'utf8')).flatMap((object) =>
      (object.rules ?? []).flatMap((rule) => (rule.nonResourceURLs ?? []).map((url) => `${object.kind} ${url} ${rule.verbs.join(',')}`)),
    );
    expect(nonResource).toEqual(['ClusterRole /replicas/watermark get']);
  });

  it('never refused the server anything (in the files of this run)', () => {
    expect(requests.filter((request) => request.decision !== 'allow').map(describeRequest)).toEqual([]);
  });

  it('are each used by the suite, and each binding to a built-in role allowed something', async (context) => {
    const objects = rbacObjects(await fs.readFile(RBAC_FILE, 'utf8'));
    const unused = permissions(objects).filter((permission) => !requests.some((request) => allows(permission, request)));
    const builtInBindings = objects.filter((object) => (object.kind === 'ClusterRoleBinding' || object.kind === 'RoleBinding') && object.roleRef?.name !== 'hostclaim-apiserver');
    const idleBindings = builtInBindings.filter((binding) => !requests.some((request) => request.reason.includes(bindingReason(binding))));
    if (!wholeSuite) {
      context.skip(`needs the whole integration suite; unused so far: ${JSON.stringify(unused)}; idle bindings: ${idleBindings.map((binding) => binding.metadata.name).join(', ')}`);
    }
    expect(builtInBindings.map((binding) => binding.metadata.name)).toEqual(['hostclaim-apiserver:system:auth-delegator', 'hostclaim-apiserver:extension-apiserver-authentication-reader']);
    expect(unused).toEqual([]);
    expect(idleBindings.map((binding) => binding.metadata.name)).toEqual([]);
  });
});
