/**
 * The authorization cache for reads across namespaces, after OpenShift's
 * (pkg/project/auth/cache.go): RBAC from shared informers on Roles,
 * RoleBindings, ClusterRoles and ClusterRoleBindings, evaluated per user
 * (rbac-rules.ts) and remembered until RBAC changes, so a request costs no
 * SubjectAccessReview per namespace. Open watches are told when a change
 * of RBAC changed their requester's namespaces.
 *
 * The per-namespace rule, used alike for a namespaced list or watch and
 * for each namespace of a list or watch of all namespaces: the user may
 * read namespace N when
 *   1. RBAC allows the verb in N (system:masters, a ClusterRoleBinding, or
 *      a RoleBinding in N), the opt-in cluster-wide-reads grant not
 *      counted; or
 *   2. the user is not a subject of that grant and a SubjectAccessReview
 *      allows it for a reason other than RBAC (a webhook authorizer). An
 *      RBAC allow the informers do not show yet is not taken: it may be
 *      the grant itself, seen by kube-apiserver first.
 * Rule 2 is asked once per request (for a list of all namespaces, at the
 * cluster scope: it then means every namespace), never per namespace, so a
 * non-RBAC authorizer's per-namespace decisions do not show in lists of all
 * namespaces.
 */
import { LRUCache } from 'lru-cache';
import type { NamespaceAccess, ReadAccess } from '../api/rest/namespace-scope.js';
import { serviceUnavailable, type GroupResource } from '../api/status.js';
import { withoutManagedFields, type SharedInformer, type SharedInformerFactory } from '../backing/shared-informers.js';
import type { Attributes, Decision } from './authorizer.js';
import { RbacSnapshot, type RbacAccess, type RbacBinding, type RbacRole } from './rbac-rules.js';
import type { UserInfo } from '../api/user.js';

const rbacPath = '/apis/rbac.authorization.k8s.io/v1';
/** Changes of RBAC often come in bursts (a namespace's bindings created together): recompute once per burst. */
const notifyDelayMs = 100;
const rbacReasonPrefix = 'RBAC:';
/** How long a request waits for the RBAC informers' first lists (by default). */
const defaultSyncWaitMs = 10_000;

export type Authorize = (user: UserInfo, attributes: Attributes) => Promise<Decision>;

type Verb = 'list' | 'watch';

interface Subscription {
  readonly user: UserInfo;
  readonly verb: Verb;
  readonly gr: GroupResource;
  readonly listener: (access: NamespaceAccess) => void;
}

export class NamespaceAccessCache implements ReadAccess {
  private readonly roles: SharedInformer<RbacRole>;
  private readonly roleBindings: SharedInformer<RbacBinding>;
  private readonly clusterRoles: SharedInformer<RbacRole>;
  private readonly clusterRoleBindings: SharedInformer<RbacBinding>;
  private snapshot: RbacSnapshot | undefined;
  private readonly answers = new LRUCache<string, RbacAccess>({ max: 10_000 });
  private readonly subscriptions = new Set<Subscription>();
  private notifyTimer: ReturnType<typeof setTimeout> | undefined;

  /** `authorize`: the delegating authorizer (SubjectAccessReview), for rule 2. */
  constructor(
    informers: SharedInformerFactory,
    private readonly authorize: Authorize,
    private readonly syncWaitMs = defaultSyncWaitMs,
  ) {
    this.roles = informers.informerFor<RbacRole>({ path: `${rbacPath}/roles`, transform: withoutManagedFields });
    this.roleBindings = informers.informerFor<RbacBinding>({ path: `${rbacPath}/rolebindings`, transform: withoutManagedFields });
    this.clusterRoles = informers.informerFor<RbacRole>({ path: `${rbacPath}/clusterroles`, transform: withoutManagedFields });
    this.clusterRoleBindings = informers.informerFor<RbacBinding>({ path: `${rbacPath}/clusterrolebindings`, transform: withoutManagedFields });
    const changed = (): void => {
      this.changed();
    };
    for (const informer of this.informers()) informer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
  }

  hasSynced(): boolean {
    return this.informers().every((informer) => informer.hasSynced());
  }

  /** Rule 1 and 2 for one namespace (a namespaced list or watch). */
  async allowsNamespace(user: UserInfo, attributes: Attributes & { readonly kind: 'resource' }): Promise<Decision> {
    const rbac = await this.rbac(user, attributes.verb, attributes);
    if (rbac.all || rbac.namespaces.has(attributes.namespace)) return { allowed: true, reason: '' };
    return this.otherAuthorizer(user, rbac, attributes);
  }

  async namespaces(user: UserInfo, verb: Verb, gr: GroupResource): Promise<NamespaceAccess> {
    const rbac = await this.rbac(user, verb, gr);
    if (rbac.all) return 'all';
    const clusterScope: Attributes = { kind: 'resource', verb, group: gr.group, version: '', resource: gr.resource, subresource: '', namespace: '', name: '' };
    if ((await this.otherAuthorizer(user, rbac, clusterScope)).allowed) return 'all';
    return rbac.namespaces;
  }

  subscribe(user: UserInfo, verb: Verb, gr: GroupResource, listener: (access: NamespaceAccess) => void): () => void {
    const subscription: Subscription = { user, verb, gr, listener };
    this.subscriptions.add(subscription);
    return () => {
      this.subscriptions.delete(subscription);
    };
  }

  stop(): void {
    clearTimeout(this.notifyTimer);
    this.subscriptions.clear();
  }

  /** Rule 2: a non-RBAC authorizer's allow, asked only of users the grant does not name. */
  private async otherAuthorizer(user: UserInfo, rbac: RbacAccess, attributes: Attributes): Promise<Decision> {
    if (rbac.grantSubject) return { allowed: false, reason: '' };
    const decision = await this.authorize(user, attributes);
    if (decision.allowed && decision.reason.startsWith(rbacReasonPrefix)) return { allowed: false, reason: '' };
    return decision;
  }

  private async rbac(user: UserInfo, verb: string, gr: GroupResource): Promise<RbacAccess> {
    await this.synced();
    const key = JSON.stringify([user.name, [...user.groups].sort(), verb, gr.group, gr.resource]);
    let answer = this.answers.get(key);
    if (answer === undefined) {
      this.snapshot ??= new RbacSnapshot({
        roles: this.roles.list(),
        roleBindings: this.roleBindings.list(),
        clusterRoles: this.clusterRoles.list(),
        clusterRoleBindings: this.clusterRoleBindings.list(),
      });
      answer = this.snapshot.access(user, { verb, group: gr.group, resource: gr.resource });
      this.answers.set(key, answer);
    }
    return answer;
  }

  /** Waits a while for the first lists of RBAC (a replica just started); a cache that cannot list RBAC answers 503. */
  private async synced(): Promise<void> {
    if (this.hasSynced()) return;
    const signal = AbortSignal.timeout(this.syncWaitMs);
    await Promise.all(this.informers().map((informer) => informer.waitForSync(signal)));
    if (!this.hasSynced()) throw serviceUnavailable('the authorization cache of RBAC is not synced yet');
  }

  private changed(): void {
    this.snapshot = undefined;
    this.answers.clear();
    if (this.notifyTimer !== undefined || this.subscriptions.size === 0) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = undefined;
      void this.notify();
    }, notifyDelayMs);
    this.notifyTimer.unref();
  }

  /** Hands every open watch its requester's access as it is now (the watch ignores an unchanged one). */
  private async notify(): Promise<void> {
    for (const subscription of [...this.subscriptions]) {
      try {
        const access = await this.namespaces(subscription.user, subscription.verb, subscription.gr);
        if (this.subscriptions.has(subscription)) subscription.listener(access);
      } catch {
        // The SubjectAccessReview failed: keep the watch's current scope; the next change of RBAC asks again.
      }
    }
  }

  private informers(): SharedInformer<RbacRole | RbacBinding>[] {
    return [this.roles, this.roleBindings, this.clusterRoles, this.clusterRoleBindings] as SharedInformer<RbacRole | RbacBinding>[];
  }
}
