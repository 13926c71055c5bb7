/**
 * HardwareData computed on demand, never materialised: the model holds its
 * inputs once each, indexed (hosts by namespace, by binding claim and by
 * HardwareData name; claims by namespace; tenant namespaces grouped into
 * visibility classes by tenancy/visibility.ts), and projects a tenant
 * namespace's objects when asked. Memory is O(hosts + policies + namespaces
 * + claims); a tenant's list costs O(hosts of the host namespaces admitting
 * it + its bound hosts); the pruned inventory is computed once per host
 * version and shared by every tenant (projection.ts).
 *
 * Like kube's watch cache store (one store, filtered at read time), and
 * OpenShift's Project (a per-user view computed per read).
 */
import type { K8sSchema } from '../../api/openapi/schema.js';
import type { HubStateSource } from '../../api/rest/watch-hub.js';
import type { ApiObject } from '../../api/rest/types.js';
import type { BareMetalHost, HostDeployPolicy, Namespace } from '../../metal3/types.js';
import { hardwareDataName, isFree } from '../../tenancy/host-references.js';
import { VisibilityIndex } from '../../tenancy/visibility.js';
import { boundClaimUid, hardwareData, isVisible, stateRevision, type ClaimNamespaces, type TenantView } from './projection.js';

/** Where a page of a cluster-wide list resumes: after this object. */
export interface ObjectPosition {
  readonly namespace: string;
  readonly name: string;
}

/** What decides one tenant namespace's view, captured before a change to compute what it saw. */
export interface TenantContext {
  readonly namespace: string;
  readonly object: Namespace | undefined;
  readonly admitting: ReadonlyMap<string, readonly HostDeployPolicy[]>;
}

export class HardwareDataModel implements HubStateSource {
  readonly visibility = new VisibilityIndex();
  private readonly hosts = new Map<string, BareMetalHost>();
  private readonly hostsByNamespace = new Map<string, Map<string, BareMetalHost>>();
  /** Host keys by the uid of the (virtual) HostClaim their consumerRef's record belongs to. */
  private readonly hostsByClaim = new Map<string, Set<string>>();
  private readonly hostsByObjectName = new Map<string, string>();
  private readonly claims = new Map<string, string>();
  private readonly claimsByNamespace = new Map<string, Set<string>>();

  constructor(private readonly specSchema: K8sSchema) {}

  // ---- inputs -------------------------------------------------------------

  replaceHosts(hosts: readonly BareMetalHost[]): void {
    for (const key of [...this.hosts.keys()]) this.setHost(key, undefined);
    for (const host of hosts) this.setHost(hostKey(host), host);
  }

  /** Sets (undefined: removes) one host; returns the previous version. */
  setHost(key: string, host: BareMetalHost | undefined): BareMetalHost | undefined {
    const previous = this.hosts.get(key);
    if (previous !== undefined) {
      this.hosts.delete(key);
      this.hostsByNamespace.get(previous.metadata.namespace ?? '')?.delete(previous.metadata.name);
      const claim = boundClaimUid(previous);
      if (claim !== undefined) removeFromIndex(this.hostsByClaim, claim, key);
      this.hostsByObjectName.delete(objectName(previous));
    }
    if (host !== undefined) {
      this.hosts.set(key, host);
      const namespace = host.metadata.namespace ?? '';
      let names = this.hostsByNamespace.get(namespace);
      if (names === undefined) {
        names = new Map();
        this.hostsByNamespace.set(namespace, names);
      }
      names.set(host.metadata.name, host);
      const claim = boundClaimUid(host);
      if (claim !== undefined) addToIndex(this.hostsByClaim, claim, key);
      this.hostsByObjectName.set(objectName(host), key);
    }
    return previous;
  }

  host(key: string): BareMetalHost | undefined {
    return this.hosts.get(key);
  }

  /** The host whose HardwareData has this name, as far as the model knows. */
  hostNamed(objectName: string): { namespace: string; name: string } | undefined {
    const key = this.hostsByObjectName.get(objectName);
    const host = key === undefined ? undefined : this.hosts.get(key);
    return host === undefined ? undefined : { namespace: host.metadata.namespace ?? '', name: host.metadata.name };
  }

  hostsIn(namespace: string): readonly BareMetalHost[] {
    return [...(this.hostsByNamespace.get(namespace)?.values() ?? [])];
  }

  hostsBoundTo(claimUid: string): BareMetalHost[] {
    return [...(this.hostsByClaim.get(claimUid) ?? [])].map((key) => this.hosts.get(key)).filter((h) => h !== undefined);
  }

  replaceClaims(claims: ReadonlyMap<string, string>): void {
    for (const uid of [...this.claims.keys()]) this.setClaim(uid, undefined);
    for (const [uid, namespace] of claims) this.setClaim(uid, namespace);
  }

  /** Sets (undefined: removes) one claim's namespace; returns the previous one. */
  setClaim(uid: string, namespace: string | undefined): string | undefined {
    const previous = this.claims.get(uid);
    if (previous !== undefined) removeFromIndex(this.claimsByNamespace, previous, uid);
    if (namespace === undefined) this.claims.delete(uid);
    else {
      this.claims.set(uid, namespace);
      addToIndex(this.claimsByNamespace, namespace, uid);
    }
    return previous;
  }

  claimNamespace(uid: string): string | undefined {
    return this.claims.get(uid);
  }

  // ---- projection ---------------------------------------------------------

  context(namespace: string): TenantContext {
    return { namespace, object: this.visibility.namespace(namespace), admitting: this.visibility.admitting(namespace) };
  }

  /** The tenant's object for the host in the given context (default: now), or undefined when not visible. */
  object(host: BareMetalHost, context: TenantContext, claims: ClaimNamespaces = this.claims): ApiObject | undefined {
    if (context.object === undefined) return undefined;
    const view: TenantView = { namespace: context.namespace, admitting: context.admitting, claimNamespaces: claims };
    // Most tenants a host event concerns do not see the host (before or after): no revision for them.
    if (!isVisible(host, view)) return undefined;
    return hardwareData(host, view, this.specSchema, stateRevision(host, context.object, view).toString());
  }

  /** Tenant namespaces that may see the host (a superset: the policies admit them, or its claim is theirs). */
  tenantsOf(host: BareMetalHost, claims: ClaimNamespaces = this.claims): Iterable<string> {
    const claim = boundClaimUid(host);
    if (claim !== undefined) {
      const namespace = claims.get(claim);
      return namespace === undefined ? [] : [namespace];
    }
    return isFree(host) ? this.visibility.namespacesAdmittedTo(host.metadata.namespace ?? '') : [];
  }

  /** Hosts the tenant may see (a superset): the free hosts of the namespaces admitting it, and those bound to its claims. */
  candidates(context: TenantContext, claimUids: Iterable<string> = this.claimsByNamespace.get(context.namespace) ?? []): BareMetalHost[] {
    const result: BareMetalHost[] = [];
    for (const hostNamespace of context.admitting.keys()) {
      for (const host of this.hostsByNamespace.get(hostNamespace)?.values() ?? []) if (isFree(host)) result.push(host);
    }
    for (const uid of claimUids) result.push(...this.hostsBoundTo(uid));
    return result;
  }

  // ---- reads (HubStateSource) --------------------------------------------

  get(namespace: string, name: string): ApiObject | undefined {
    const key = this.hostsByObjectName.get(name);
    const host = key === undefined ? undefined : this.hosts.get(key);
    return host === undefined ? undefined : this.object(host, this.context(namespace));
  }

  list(namespace?: string): ApiObject[] {
    return namespace === undefined ? [...this.listFrom(undefined)] : [...this.namespaceObjects(namespace, undefined)];
  }

  /**
   * Every object in kube's list order (by `<namespace>/<name>`), starting
   * after `after`, computed one at a time: a page costs what it returns
   * (plus sorting the candidate names of the namespaces it touches).
   */
  *listFrom(after: ObjectPosition | undefined): Generator<ApiObject> {
    for (const namespace of this.visibility.sortedNamespaces()) {
      if (after !== undefined && `${namespace}/` < `${after.namespace}/`) continue;
      yield* this.namespaceObjects(namespace, after?.namespace === namespace ? after.name : undefined);
    }
  }

  count(): number {
    let total = 0;
    for (const namespace of this.visibility.sortedNamespaces()) for (const _ of this.namespaceObjects(namespace, undefined)) total++;
    return total;
  }

  /** The namespace's objects by name, after `afterName`, computed as they are asked for. */
  private *namespaceObjects(namespace: string, afterName: string | undefined): Generator<ApiObject> {
    const context = this.context(namespace);
    if (context.object === undefined) return;
    const named = this.candidates(context)
      .map((host) => [objectName(host), host] as const)
      .filter(([name]) => afterName === undefined || name > afterName)
      .sort(([a], [b]) => compareNames(a, b));
    for (const [, host] of named) {
      const object = this.object(host, context);
      if (object !== undefined) yield object;
    }
  }
}

export function hostKey(host: BareMetalHost): string {
  return `${host.metadata.namespace ?? ''}/${host.metadata.name}`;
}

function objectName(host: BareMetalHost): string {
  return hardwareDataName(host.metadata.namespace ?? '', host.metadata.name);
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function addToIndex(index: Map<string, Set<string>>, key: string, value: string): void {
  let set = index.get(key);
  if (set === undefined) {
    set = new Set();
    index.set(key, set);
  }
  set.add(value);
}

function removeFromIndex(index: Map<string, Set<string>>, key: string, value: string): void {
  const set = index.get(key);
  if (set === undefined) return;
  set.delete(value);
  if (set.size === 0) index.delete(key);
}
