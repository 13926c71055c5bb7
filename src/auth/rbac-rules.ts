/**
 * RBAC evaluated in memory, for one question: in which namespaces may a user
 * `list` (or `watch`) a resource? Follows kube's RBAC authorizer
 * (plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows,
 * pkg/registry/rbac/validation/rule.go appliesToUser and
 * VisitRulesFor) and, in its shape, OpenShift's authorization cache
 * (per subject, the namespaces where a resource may be read).
 *
 * The opt-in cluster-wide-reads grant (a ClusterRole labelled
 * `tenancy.metal3.io/cluster-wide-reads`) lets kube-apiserver pass
 * cluster-scope lists and watches on to us; it is not a right to read any
 * namespace, so bindings to such a ClusterRole are ignored here and only
 * tell whether the user is a subject of the grant.
 *
 * Aggregated ClusterRoles need nothing special: kube-controller-manager
 * writes the aggregated rules into them.
 */
import type { UserInfo } from '../api/user.js';

export const clusterWideReadsLabel = 'tenancy.metal3.io/cluster-wide-reads';
const privilegedGroup = 'system:masters';

export interface PolicyRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs?: readonly string[];
  readonly resourceNames?: readonly string[];
}

export interface RbacRole {
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly rules?: readonly PolicyRule[] | null;
}

export interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface RbacBinding {
  readonly metadata: { readonly name?: string; readonly namespace?: string };
  readonly roleRef: { readonly kind: string; readonly name: string };
  readonly subjects?: readonly Subject[] | null;
}

/** The RBAC objects of the cluster, as the informers hold them. */
export interface RbacObjects {
  readonly roles: readonly RbacRole[];
  readonly roleBindings: readonly RbacBinding[];
  readonly clusterRoles: readonly RbacRole[];
  readonly clusterRoleBindings: readonly RbacBinding[];
}

/** What is asked: a verb on a resource of a group (no subresource, no name: a list or a watch). */
export interface ReadRequest {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
}

/** A user's read access to a resource by RBAC, the opt-in grant not counted. */
export interface RbacAccess {
  /** Everywhere: system:masters, or a ClusterRoleBinding to a role that allows it. */
  readonly all: boolean;
  /** Where a RoleBinding allows it (empty when `all`). */
  readonly namespaces: ReadonlySet<string>;
  /** Whether a binding of the opt-in grant names the user (its allow is then not evidence of anything). */
  readonly grantSubject: boolean;
}

/**
 * RBAC indexed by subject, built once per change of the RBAC objects and
 * asked many times: a question costs the user's bindings, not the cluster's.
 */
export class RbacSnapshot {
  private readonly clusterRoles = new Map<string, RbacRole>();
  private readonly roles = new Map<string, RbacRole>();
  /** Subject key (see subjectKeys) → bindings naming it; '' namespace for ClusterRoleBindings. */
  private readonly bindings = new Map<string, RbacBinding[]>();

  constructor(objects: RbacObjects) {
    for (const role of objects.clusterRoles) this.clusterRoles.set(role.metadata.name ?? '', role);
    for (const role of objects.roles) this.roles.set(`${role.metadata.namespace ?? ''}/${role.metadata.name ?? ''}`, role);
    for (const binding of [...objects.clusterRoleBindings, ...objects.roleBindings]) {
      for (const subject of binding.subjects ?? []) {
        const key = bindingSubjectKey(subject, binding.metadata.namespace ?? '');
        if (key === undefined) continue;
        let list = this.bindings.get(key);
        if (list === undefined) {
          list = [];
          this.bindings.set(key, list);
        }
        if (!list.includes(binding)) list.push(binding);
      }
    }
  }

  access(user: UserInfo, request: ReadRequest): RbacAccess {
    if (user.groups.includes(privilegedGroup)) return { all: true, namespaces: new Set(), grantSubject: false };
    const namespaces = new Set<string>();
    let grantSubject = false;
    for (const binding of this.bindingsOf(user)) {
      const role = this.roleOf(binding);
      if (role === undefined || !(role.rules ?? []).some((rule) => ruleAllows(rule, request))) continue;
      if (isGrant(role)) {
        grantSubject = true;
        continue;
      }
      const namespace = binding.metadata.namespace ?? '';
      if (namespace === '') return { all: true, namespaces: new Set(), grantSubject };
      namespaces.add(namespace);
    }
    return { all: false, namespaces, grantSubject };
  }

  private bindingsOf(user: UserInfo): Set<RbacBinding> {
    const found = new Set<RbacBinding>();
    for (const key of userSubjectKeys(user)) for (const binding of this.bindings.get(key) ?? []) found.add(binding);
    return found;
  }

  private roleOf(binding: RbacBinding): RbacRole | undefined {
    if (binding.roleRef.kind === 'ClusterRole') return this.clusterRoles.get(binding.roleRef.name);
    if (binding.roleRef.kind === 'Role') return this.roles.get(`${binding.metadata.namespace ?? ''}/${binding.roleRef.name}`);
    return undefined;
  }
}

function isGrant(role: RbacRole): boolean {
  return role.metadata.labels?.[clusterWideReadsLabel] !== undefined;
}

/** rbac.go RuleAllows for a request without subresource or name (a list or a watch). */
export function ruleAllows(rule: PolicyRule, request: ReadRequest): boolean {
  const matches = (values: readonly string[] | undefined, wanted: string): boolean => (values ?? []).some((value) => value === '*' || value === wanted);
  // A rule limited to resourceNames never allows a request without a name.
  if ((rule.resourceNames ?? []).length > 0) return false;
  return matches(rule.verbs, request.verb) && matches(rule.apiGroups, request.group) && matches(rule.resources, request.resource);
}

/**
 * appliesToUser, turned into lookup keys: a User or Group subject by name; a
 * ServiceAccount by its namespace (the binding's when unset, none for a
 * ClusterRoleBinding) and name.
 */
function bindingSubjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User':
      return `user:${subject.name}`;
    case 'Group':
      return `group:${subject.name}`;
    case 'ServiceAccount': {
      const namespace = subject.namespace !== undefined && subject.namespace !== '' ? subject.namespace : bindingNamespace;
      return namespace === '' ? undefined : `user:system:serviceaccount:${namespace}:${subject.name}`;
    }
    default:
      return undefined;
  }
}

function userSubjectKeys(user: UserInfo): string[] {
  return [`user:${user.name}`, ...user.groups.map((group) => `group:${group}`)];
}
