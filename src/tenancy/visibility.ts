/**
 * Which tenant namespaces the HostDeployPolicies admit to which host
 * namespaces, kept incrementally: tenant namespaces are grouped into
 * *classes* by the set of policies admitting them, so the model holds
 * O(namespaces + classes × policies), never namespaces × hosts
 * (the reference's "join by class"). A class is recomputed once per policy
 * or namespace-label change, never per request.
 */
import type { HostDeployPolicy, Namespace } from '../metal3/types.js';
import { admits, tenantNamespace } from './policy.js';

/** Tenant namespaces admitted by exactly the same policies. */
export interface TenantClass {
  /** The admitting policies' keys (`<namespace>/<name>@<resourceVersion>`), sorted and joined: equal sets, equal keys. */
  readonly key: string;
  /** The admitting policies, by the host namespace they govern. */
  readonly admitting: ReadonlyMap<string, readonly HostDeployPolicy[]>;
  readonly members: Set<string>;
}

const noPolicies: ReadonlyMap<string, readonly HostDeployPolicy[]> = new Map();

export class VisibilityIndex {
  private readonly policies = new Map<string, HostDeployPolicy>();
  private readonly namespaces = new Map<string, Namespace>();
  private readonly classes = new Map<string, TenantClass>();
  private readonly classOfNamespace = new Map<string, TenantClass>();

  /** Replaces every policy; returns the tenant namespaces whose class changed. */
  replacePolicies(policies: readonly HostDeployPolicy[]): Set<string> {
    this.policies.clear();
    for (const policy of policies) this.policies.set(policyKey(policy), policy);
    return this.reclassifyAll();
  }

  /** One policy changed (undefined: deleted); returns the tenant namespaces whose class changed. */
  setPolicy(key: string, policy: HostDeployPolicy | undefined): Set<string> {
    if (policy === undefined) this.policies.delete(key);
    else this.policies.set(key, policy);
    return this.reclassifyAll();
  }

  replaceNamespaces(namespaces: readonly Namespace[]): Set<string> {
    const before = new Set(this.namespaces.keys());
    this.namespaces.clear();
    for (const namespace of namespaces) this.namespaces.set(namespace.metadata.name, namespace);
    for (const name of before) if (!this.namespaces.has(name)) this.classify(name);
    return new Set([...before, ...this.reclassifyAll()]);
  }

  /** One namespace changed (undefined: deleted); returns whether its class changed. */
  setNamespace(name: string, namespace: Namespace | undefined): boolean {
    if (namespace === undefined) this.namespaces.delete(name);
    else this.namespaces.set(name, namespace);
    return this.classify(name);
  }

  namespace(name: string): Namespace | undefined {
    return this.namespaces.get(name);
  }

  /** Tenant namespaces in storage-key order (`<namespace>/`, so `tenant-a` before `tenant`). */
  sortedNamespaces(): string[] {
    return [...this.namespaces.keys()].sort((a, b) => (`${a}/` < `${b}/` ? -1 : `${a}/` > `${b}/` ? 1 : 0));
  }

  namespaceCount(): number {
    return this.namespaces.size;
  }

  /** The policies admitting the namespace, by host namespace (none for an unknown namespace). */
  admitting(namespace: string): ReadonlyMap<string, readonly HostDeployPolicy[]> {
    return this.classOfNamespace.get(namespace)?.admitting ?? noPolicies;
  }

  /** The tenant namespaces some policy of the host namespace admits. */
  *namespacesAdmittedTo(hostNamespace: string): Generator<string> {
    for (const tenantClass of this.classes.values()) {
      if (tenantClass.admitting.has(hostNamespace)) yield* tenantClass.members;
    }
  }

  private reclassifyAll(): Set<string> {
    const changed = new Set<string>();
    for (const name of this.namespaces.keys()) if (this.classify(name)) changed.add(name);
    return changed;
  }

  /** Puts the namespace in the class of its admitting policies; whether that changed its class. */
  private classify(name: string): boolean {
    const namespace = this.namespaces.get(name);
    const previous = this.classOfNamespace.get(name);
    const admitting = namespace === undefined ? [] : [...this.policies.entries()].filter(([, p]) => admits(p, tenantNamespace(namespace, name)));
    const key = admitting.map(([k, p]) => `${k}@${p.metadata.resourceVersion ?? ''}`).sort().join('\n');
    if (previous?.key === key && namespace !== undefined) return false;
    if (previous !== undefined) {
      previous.members.delete(name);
      if (previous.members.size === 0) this.classes.delete(previous.key);
      this.classOfNamespace.delete(name);
    }
    if (namespace === undefined) return previous !== undefined && previous.admitting.size > 0;
    let tenantClass = this.classes.get(key);
    if (tenantClass === undefined) {
      tenantClass = { key, admitting: byHostNamespace(admitting.map(([, p]) => p)), members: new Set() };
      this.classes.set(key, tenantClass);
    }
    tenantClass.members.add(name);
    this.classOfNamespace.set(name, tenantClass);
    return previous?.key !== key;
  }
}

export function policyKey(policy: HostDeployPolicy): string {
  return `${policy.metadata.namespace ?? ''}/${policy.metadata.name}`;
}

function byHostNamespace(policies: readonly HostDeployPolicy[]): Map<string, HostDeployPolicy[]> {
  const result = new Map<string, HostDeployPolicy[]>();
  for (const policy of policies) {
    const hostNamespace = policy.metadata.namespace;
    if (hostNamespace === undefined) continue;
    const group = result.get(hostNamespace) ?? [];
    group.push(policy);
    result.set(hostNamespace, group);
  }
  return result;
}
