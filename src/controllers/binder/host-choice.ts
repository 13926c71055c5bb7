/**
 * Which host a claim gets: the selection (tenancy/selection.ts) over an
 * index of the shared host cache, so a claim looks at candidates only
 * rather than at every host of the cluster; the hosts the workers are
 * binding right now; and the check of a chosen host before its lock is
 * taken. One per leadership term: the index is built from the cache's
 * replay when the term registers, then kept from its events.
 */
import type { ApiObject } from '../../api/rest/types.js';
import type { SharedInformer } from '../../backing/shared-informers.js';
import { hostKeys, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../metal3/types.js';
import { boundRecord } from '../../tenancy/host-references.js';
import { HostSelectionIndex } from '../../tenancy/host-index.js';
import { tenantNamespace } from '../../tenancy/policy.js';
import { admittedHostNamespaces, hostKey, isCandidate, matchesSelector, mayTake, selectHost, type Selection, type SelectionRequest } from '../../tenancy/selection.js';
import { claimOf, releasingPoolHosts, type Claim } from './claim.js';
import { consumerIndex, recordIndexes, releasingValue, unboundValue } from './indexes.js';

/** The shared caches the choice reads. */
export interface ChoiceInformers {
  readonly hosts: SharedInformer<BareMetalHost>;
  readonly policies: SharedInformer<HostDeployPolicy>;
  readonly namespaces: SharedInformer<Namespace>;
  readonly records: SharedInformer<ApiObject>;
}

export class HostChoice {
  private readonly index = new HostSelectionIndex();
  /** Hosts being bound right now (host key → record name), so two workers never race for one host. */
  private readonly reserved = new Map<string, string>();
  private readonly removeHandler: () => void;

  constructor(private readonly informers: ChoiceInformers) {
    // The registration replays the cache as adds; a relist comes as the adds, updates and deletes it implies.
    this.removeHandler = informers.hosts.addEventHandler({
      onAdd: (host) => {
        this.index.set(host);
      },
      onUpdate: (_, host) => {
        this.index.set(host);
      },
      onDelete: (host) => {
        this.index.delete(host);
      },
    });
  }

  /** The end of the term: the cache's events no longer reach the index. */
  stop(): void {
    this.removeHandler();
    this.index.clear();
    this.reserved.clear();
  }

  request(claim: Claim): SelectionRequest {
    return {
      namespace: tenantNamespace(this.informers.namespaces.get(undefined, claim.namespace), claim.namespace),
      ...(claim.spec.hostSelector === undefined ? {} : { hostSelector: claim.spec.hostSelector }),
      ...(claim.spec.failureDomain === undefined ? {} : { failureDomain: claim.spec.failureDomain }),
      ...(claim.spec.nodeReuse === undefined ? {} : { nodeReuse: claim.spec.nodeReuse }),
    };
  }

  /** A host for the claim, or why there is none; hosts other claims are being bound to are skipped. */
  select(claim: Claim, request: SelectionRequest): Selection {
    const { hosts, records, policies } = this.informers;
    const reserved = new Set([...this.reserved].filter(([, record]) => record !== claim.identity.name).map(([key]) => key));
    // A pool's host whose deleted claim the release has not labelled yet is the pool's all the same.
    const releasing = releasingPoolHosts(records.byIndex(recordIndexes.releasingForPool.name, releasingValue), (record) =>
      hosts.byIndex(consumerIndex.name, `${record.namespace}/${record.name}`),
    );
    return selectHost(request, this.index, policies.list(), reserved, releasing);
  }

  /**
   * The unbound claims a host change concerns: every one when the host
   * carries a node-reuse label (a claim waiting for its pool's host may have
   * to fall back to another); otherwise, when the host is a candidate, those
   * that may take it. The others gain nothing from the change: queueing
   * every unbound claim at each freed host made the leader's work (and the
   * memory its garbage holds) grow with pending claims × host changes.
   */
  unboundConcerned(host: BareMetalHost, deleted: boolean): ApiObject[] {
    const unbound = this.informers.records.byIndex(recordIndexes.unbound.name, unboundValue);
    if (hostKeys.nodeReuse in (host.metadata.labels ?? {})) return unbound;
    if (deleted || !isCandidate(host)) return [];
    return unbound.filter((record) => {
      const claim = claimOf(record);
      return claim !== undefined && this.suitable(host, this.request(claim));
    });
  }

  /** Whether the claim may still take the host (as judged now, from the caches). */
  suitable(host: BareMetalHost, request: SelectionRequest): boolean {
    return (
      isCandidate(host) &&
      mayTake(host, request) &&
      matchesSelector(host, request.hostSelector) &&
      admittedHostNamespaces(request, this.informers.policies.list()).has(host.metadata.namespace ?? '')
    );
  }

  /** The host is being bound to the record: other workers leave it alone until the cache shows the binding or the attempt fails. */
  reserve(keyOfHost: string, recordName: string): void {
    this.reserved.set(keyOfHost, recordName);
  }

  unreserve(keyOfHost: string): void {
    this.reserved.delete(keyOfHost);
  }

  /** A host event: a reservation ends once the cache shows the host bound to the record that reserved it. */
  hostChanged(host: BareMetalHost): void {
    const key = hostKey(host);
    const bound = boundRecord(host);
    if (bound !== undefined && this.reserved.get(key) === bound.name) this.reserved.delete(key);
  }
}
