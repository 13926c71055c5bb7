import { describe, expect, it } from 'vitest';
import { RbacSnapshot, ruleAllows, type RbacBinding, type RbacObjects, type RbacRole } from '../../../src/auth/rbac-rules.js';
import type { UserInfo } from '../../../src/api/user.js';

const group = 'tenancy.metal3.io';
const listClaims = { verb: 'list', group, resource: 'hostclaims' };

function user(name: string, groups: string[] = []): UserInfo {
  return { name, uid: '', groups: [...groups, 'system:authenticated'], extra: {} };
}

function clusterRole(name: string, rules: RbacRole['rules'], labels?: Record<string, string>): RbacRole {
  return { metadata: { name, ...(labels === undefined ? {} : { labels }) }, rules };
}

function role(namespace: string, name: string, rules: RbacRole['rules']): RbacRole {
  return { metadata: { namespace, name }, rules };
}

function binding(namespace: string | undefined, name: string, roleRef: RbacBinding['roleRef'], subjects: RbacBinding['subjects']): RbacBinding {
  return { metadata: { name, ...(namespace === undefined ? {} : { namespace }) }, roleRef, subjects };
}

/** What kube-controller-manager materializes into `admin` from deploy/base/aggregated-roles.yaml (among other rules). */
const admin = clusterRole('admin', [
  { apiGroups: [''], resources: ['pods'], verbs: ['*'] },
  { apiGroups: [group], resources: ['hostclaims'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] },
  { apiGroups: [group], resources: ['hardwaredata'], verbs: ['get', 'list', 'watch'] },
]);
const grant = clusterRole('hostclaim-apiserver-cluster-wide-reads', [{ apiGroups: [group], resources: ['hostclaims', 'hardwaredata'], verbs: ['list', 'watch'] }], {
  'tenancy.metal3.io/cluster-wide-reads': 'true',
});
const grantBinding = binding(undefined, 'hostclaim-apiserver-cluster-wide-reads', { kind: 'ClusterRole', name: grant.metadata.name ?? '' }, [
  { kind: 'Group', name: 'system:authenticated' },
]);

function snapshot(objects: Partial<RbacObjects>): RbacSnapshot {
  return new RbacSnapshot({ roles: [], roleBindings: [], clusterRoles: [], clusterRoleBindings: [], ...objects });
}

const adminOf = (namespace: string, subject: { kind: string; name: string; namespace?: string }): RbacBinding =>
  binding(namespace, `admin-${subject.name}`, { kind: 'ClusterRole', name: 'admin' }, [subject]);

describe('RbacSnapshot.access', () => {
  it('gives the namespaces of the RoleBindings whose role allows the verb, and not the grant', () => {
    const rbac = snapshot({
      clusterRoles: [admin, grant],
      clusterRoleBindings: [grantBinding],
      roleBindings: ['t1', 't2', 't3'].map((ns) => adminOf(ns, { kind: 'User', name: 'alice' })).concat(adminOf('t4', { kind: 'User', name: 'bob' })),
    });
    const access = rbac.access(user('alice'), listClaims);
    expect({ all: access.all, namespaces: [...access.namespaces].sort(), grantSubject: access.grantSubject }).toEqual({
      all: false,
      namespaces: ['t1', 't2', 't3'],
      grantSubject: true,
    });
    const stranger = rbac.access(user('carol'), { verb: 'watch', group, resource: 'hardwaredata' });
    expect({ all: stranger.all, namespaces: [...stranger.namespaces], grantSubject: stranger.grantSubject }).toEqual({ all: false, namespaces: [], grantSubject: true });
  });

  it('ignores any binding to a role labelled as the grant, also a RoleBinding', () => {
    const rbac = snapshot({ clusterRoles: [grant], roleBindings: [binding('t1', 'g', { kind: 'ClusterRole', name: grant.metadata.name ?? '' }, [{ kind: 'User', name: 'alice' }])] });
    const access = rbac.access(user('alice'), listClaims);
    expect([access.all, [...access.namespaces], access.grantSubject]).toEqual([false, [], true]);
  });

  it('is every namespace for a ClusterRoleBinding that allows the verb, and for system:masters', () => {
    const view = clusterRole('view', [{ apiGroups: [group], resources: ['hostclaims', 'hardwaredata'], verbs: ['get', 'list', 'watch'] }]);
    const rbac = snapshot({ clusterRoles: [view, grant], clusterRoleBindings: [grantBinding, binding(undefined, 'ops', { kind: 'ClusterRole', name: 'view' }, [{ kind: 'Group', name: 'ops' }])] });
    expect(rbac.access(user('dave', ['ops']), listClaims).all).toBe(true);
    expect(rbac.access(user('erin'), listClaims).all).toBe(false);
    expect(rbac.access(user('root', ['system:masters']), listClaims).all).toBe(true);
  });

  it('matches Group and ServiceAccount subjects as kube does (a ServiceAccount defaults to the binding namespace)', () => {
    const rbac = snapshot({
      clusterRoles: [admin],
      roleBindings: [
        adminOf('t1', { kind: 'Group', name: 'team' }),
        adminOf('t2', { kind: 'ServiceAccount', name: 'capm3' }),
        adminOf('t3', { kind: 'ServiceAccount', name: 'capm3', namespace: 't2' }),
      ],
    });
    expect([...rbac.access(user('frank', ['team']), listClaims).namespaces]).toEqual(['t1']);
    expect([...rbac.access(user('system:serviceaccount:t2:capm3'), listClaims).namespaces].sort()).toEqual(['t2', 't3']);
    expect([...rbac.access(user('system:serviceaccount:t1:capm3'), listClaims).namespaces]).toEqual([]);
    // A ServiceAccount subject of a ClusterRoleBinding without a namespace names nobody.
    const unnamespaced = snapshot({ clusterRoles: [admin], clusterRoleBindings: [binding(undefined, 'x', { kind: 'ClusterRole', name: 'admin' }, [{ kind: 'ServiceAccount', name: 'capm3' }])] });
    expect(unnamespaced.access(user('system:serviceaccount::capm3'), listClaims).all).toBe(false);
  });

  it('reads Roles from the binding namespace, and skips a binding whose role does not exist', () => {
    const rbac = snapshot({
      roles: [role('t1', 'reader', [{ apiGroups: [group], resources: ['hostclaims'], verbs: ['list'] }]), role('t9', 'reader', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])],
      roleBindings: [
        binding('t1', 'r', { kind: 'Role', name: 'reader' }, [{ kind: 'User', name: 'gina' }]),
        binding('t2', 'r', { kind: 'Role', name: 'reader' }, [{ kind: 'User', name: 'gina' }]),
        binding('t3', 'r', { kind: 'ClusterRole', name: 'missing' }, [{ kind: 'User', name: 'gina' }]),
      ],
    });
    expect([...rbac.access(user('gina'), listClaims).namespaces]).toEqual(['t1']);
    expect([...rbac.access(user('gina'), { verb: 'watch', group, resource: 'hostclaims' }).namespaces]).toEqual([]);
  });
});

describe('ruleAllows (a list or watch: no subresource, no name)', () => {
  it('needs the verb, group and resource, each exact or *', () => {
    expect(ruleAllows({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, listClaims)).toBe(true);
    expect(ruleAllows({ apiGroups: [group], resources: ['hostclaims'], verbs: ['get'] }, listClaims)).toBe(false);
    expect(ruleAllows({ apiGroups: ['metal3.io'], resources: ['hostclaims'], verbs: ['list'] }, listClaims)).toBe(false);
    expect(ruleAllows({ apiGroups: [group], resources: ['hostclaims/status'], verbs: ['list'] }, listClaims)).toBe(false);
    expect(ruleAllows({ apiGroups: [group], resources: ['hostclaims'], verbs: ['list'] }, listClaims)).toBe(true);
  });

  it('never allows with resourceNames (a list has no name)', () => {
    expect(ruleAllows({ apiGroups: [group], resources: ['hostclaims'], verbs: ['list'], resourceNames: ['a'] }, listClaims)).toBe(false);
  });
});
