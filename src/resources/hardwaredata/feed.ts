/**
 * The live HardwareData state: the shared caches of BareMetalHosts,
 * HostDeployPolicies and Namespaces, plus the HostClaim hub, recompute the
 * projections each event affects and publish the differences into the
 * HardwareData WatchHub, which serves watches (resume, bookmarks, WatchList,
 * Table) and resourceVersion=0 reads like any other resource's.
 *
 * resourceVersions: each change carries the revision of the event that
 * caused it when that is newer than everything published, and otherwise the
 * next integer. kube's resourceVersions are one etcd revision space, but
 * four informers deliver independently: an event can arrive after a newer
 * one of another informer, and one event can change many objects. Unique,
 * increasing resourceVersions keep resuming a watch exact (a watcher cut off
 * in the middle of a change set resumes after what it saw, not after the set).
 */
import type { K8sSchema } from '../../api/openapi/schema-source.js';
import { followHub } from '../../api/rest/hub-follower.js';
import { revision, type ApiObject, type ObjectEvent } from '../../api/rest/types.js';
import type { WatchHub } from '../../api/rest/watch-hub.js';
import { sameJson } from '../../backing/json.js';
import type { KubeObject } from '../../backing/informer.js';
import type { ResourceEventHandler, SharedInformer, SharedInformerFactory } from '../../backing/shared-informers.js';
import { virtualUid } from '../../backing/storage-mapping.js';
import { metal3Resources, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../metal3/types.js';
import { boundRecord, hardwareDataName } from '../../tenancy/host-references.js';
import { claimNamespacesOf, hardwareData, tenantView } from './projection.js';

export interface HostRef {
  readonly namespace: string;
  readonly name: string;
}

/** Which projections an event may have changed: tenant namespaces × hosts (undefined: all). */
interface Scope {
  readonly namespaces?: readonly string[];
  readonly hosts?: readonly HostRef[];
}

export class HardwareDataFeed {
  private readonly hosts: SharedInformer<BareMetalHost>;
  private readonly policies: SharedInformer<HostDeployPolicy>;
  private readonly namespaces: SharedInformer<Namespace>;
  private removeHandlers: (() => void)[] = [];
  private claimNamespaces = new Map<string, string>();
  private claimsSynced = false;
  /** The newest revision any source reported: where the hub's first state is. */
  private newestRevision = 0n;
  private stopFollowingClaims: (() => void) | undefined;

  /** The process's shared caches of hosts, policies and namespaces; their failures are reported by the factory. */
  constructor(
    informers: SharedInformerFactory,
    readonly hub: WatchHub,
    private readonly claimHub: WatchHub,
    private readonly specSchema: K8sSchema,
  ) {
    this.hosts = informers.informerFor<BareMetalHost>(metal3Resources.bareMetalHosts);
    this.policies = informers.informerFor<HostDeployPolicy>(metal3Resources.hostDeployPolicies);
    this.namespaces = informers.informerFor<Namespace>(metal3Resources.namespaces);
  }

  start(): void {
    this.removeHandlers = [
      this.hosts.addEventHandler(this.handlers((host) => ({ hosts: [refOf(host)] }))),
      this.policies.addEventHandler(this.handlers((policy) => ({ hosts: this.hostsIn(policy.metadata.namespace ?? '') }))),
      this.namespaces.addEventHandler(this.handlers((namespace) => ({ namespaces: [namespace.metadata.name] }))),
    ];
    this.stopFollowingClaims = followHub(this.claimHub, {
      onResync: (claims, rv) => {
        this.claimsResynced(claims, rv);
      },
      onEvent: (event) => {
        this.claimChanged(event);
      },
    });
  }

  stop(): void {
    this.stopFollowingClaims?.();
    for (const remove of this.removeHandlers.splice(0)) remove();
  }

  /** A (re)list or absence (state '') recomputes everything; an event, what `affected` says it may change. */
  private handlers<T extends KubeObject>(affected: (object: T) => Scope): ResourceEventHandler<T> {
    const changed = (object: T): void => {
      this.reconcile(affected(object), object.metadata.resourceVersion);
    };
    return {
      onReplace: (_, rv) => {
        this.reconcile({}, rv === '' ? undefined : rv);
      },
      onAdd: changed,
      onUpdate: (_, object) => {
        changed(object);
      },
      onDelete: changed,
      onProgress: (rv) => {
        this.progress(rv);
      },
    };
  }

  // ---- HostClaims: who a bound host belongs to ------------------------------

  private claimsResynced(claims: readonly ApiObject[], rv: string): void {
    const previous = this.claimNamespaces;
    this.claimNamespaces = claimNamespacesOf(claims);
    this.claimsSynced = true;
    const changed = new Set([...previous.keys(), ...this.claimNamespaces.keys()].filter((uid) => previous.get(uid) !== this.claimNamespaces.get(uid)));
    this.reconcile({ hosts: this.hostsBoundTo(changed) }, rv);
  }

  private claimChanged(event: ObjectEvent): void {
    const { uid, namespace } = event.object.metadata;
    if (uid === undefined) return;
    const before = this.claimNamespaces.get(uid);
    if (event.type === 'DELETED') this.claimNamespaces.delete(uid);
    else if (namespace !== undefined) this.claimNamespaces.set(uid, namespace);
    if (before === this.claimNamespaces.get(uid)) return;
    this.reconcile({ hosts: this.hostsBoundTo(new Set([uid])) }, event.object.metadata.resourceVersion);
  }

  private hostsBoundTo(claimUids: ReadonlySet<string>): HostRef[] {
    if (claimUids.size === 0) return [];
    return this.hosts
      .list()
      .filter((host) => {
        const record = boundRecord(host);
        return record !== undefined && claimUids.has(virtualUid(record.uid));
      })
      .map(refOf);
  }

  private hostsIn(namespace: string): HostRef[] {
    return this.hosts
      .list()
      .filter((host) => host.metadata.namespace === namespace)
      .map(refOf);
  }

  // ---- recomputing ----------------------------------------------------------

  private sourcesSynced(): boolean {
    return this.hosts.hasSynced() && this.policies.hasSynced() && this.namespaces.hasSynced() && this.claimsSynced;
  }

  /** Recomputes the scope and publishes what changed; before every source has synced, only notes the revision. */
  private reconcile(scope: Scope, trigger: string | undefined): void {
    this.noteRevision(trigger);
    if (!this.hub.hasSynced()) {
      if (this.sourcesSynced()) this.hub.reset(this.newestRevision.toString(), this.initialState());
      return;
    }
    for (const event of this.changes(scope)) {
      const rv = this.nextRevision(trigger);
      this.hub.publish({ type: event.type, object: withResourceVersion(event.object, rv) });
    }
  }

  private initialState(): ApiObject[] {
    const rv = this.newestRevision.toString();
    return this.namespaces.list().flatMap((ns) => [...this.desired(ns.metadata.name, undefined).values()].map((o) => withResourceVersion(o, rv)));
  }

  private changes(scope: Scope): ObjectEvent[] {
    const tenantNamespaces = scope.namespaces ?? this.namespaces.list().map((ns) => ns.metadata.name);
    const events = tenantNamespaces.flatMap((namespace) => diff(this.current(namespace, scope.hosts), this.desired(namespace, scope.hosts)));
    if (scope.namespaces === undefined && scope.hosts === undefined) events.push(...this.inVanishedNamespaces(new Set(tenantNamespaces)));
    return events;
  }

  /** The projections the tenant namespace should see, by name. */
  private desired(namespace: string, hosts: readonly HostRef[] | undefined): Map<string, ApiObject> {
    const result = new Map<string, ApiObject>();
    const tenant = this.namespaces.get(undefined, namespace);
    if (tenant === undefined) return result;
    const view = tenantView(tenant, this.policies.list(), this.claimNamespaces);
    const candidates = hosts === undefined ? this.hosts.list() : hosts.map((h) => this.hosts.get(h.namespace, h.name)).filter(isDefined);
    for (const host of candidates) {
      const object = hardwareData(host, view, this.specSchema);
      if (object?.metadata.name !== undefined) result.set(object.metadata.name, object);
    }
    return result;
  }

  /** What the hub holds for the tenant namespace (and hosts), by name. */
  private current(namespace: string, hosts: readonly HostRef[] | undefined): Map<string, ApiObject> {
    const objects =
      hosts === undefined ? this.hub.list(namespace) : hosts.map((h) => this.hub.get(namespace, hardwareDataName(h.namespace, h.name))).filter(isDefined);
    return new Map(objects.map((o) => [o.metadata.name ?? '', o]));
  }

  private inVanishedNamespaces(existing: ReadonlySet<string>): ObjectEvent[] {
    return this.hub
      .list()
      .filter((o) => !existing.has(o.metadata.namespace ?? ''))
      .map((object) => ({ type: 'DELETED', object }));
  }

  private progress(rv: string): void {
    this.noteRevision(rv);
    if (this.hub.hasSynced()) this.hub.progress(rv);
  }

  private noteRevision(rv: string | undefined): void {
    const value = revision(rv);
    if (value > this.newestRevision) this.newestRevision = value;
  }

  /** The trigger's revision if newer than everything published, else the next integer (see the module comment). */
  private nextRevision(trigger: string | undefined): string {
    const current = revision(this.hub.currentResourceVersion());
    const triggered = revision(trigger);
    return (triggered > current ? triggered : current + 1n).toString();
  }
}

/** ADDED, MODIFIED or DELETED for each projection that differs (resourceVersions aside). */
function diff(current: ReadonlyMap<string, ApiObject>, desired: ReadonlyMap<string, ApiObject>): ObjectEvent[] {
  const events: ObjectEvent[] = [];
  for (const [name, object] of desired) {
    const existing = current.get(name);
    if (existing === undefined) events.push({ type: 'ADDED', object });
    else if (!sameContent(existing, object)) events.push({ type: 'MODIFIED', object });
  }
  for (const [name, object] of current) if (!desired.has(name)) events.push({ type: 'DELETED', object });
  return events;
}

/** Equal but for the resourceVersion. */
export function sameContent(a: ApiObject, b: ApiObject): boolean {
  return sameJson(withResourceVersion(a, ''), withResourceVersion(b, ''));
}

export function withResourceVersion(object: ApiObject, resourceVersion: string): ApiObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion } };
}

function refOf(host: BareMetalHost): HostRef {
  return { namespace: host.metadata.namespace ?? '', name: host.metadata.name };
}

function isDefined<T>(value: T | undefined): value is T {
  return value !== undefined;
}
