/**
 * Which hosts a claim may be bound to, and which of them it gets. Pure
 * functions over informer state: the binder re-checks the chosen host
 * against kube-apiserver when it writes the binding (resourceVersion
 * precondition), so a stale cache can cost a retry, never a double binding.
 */
import { createHash } from 'node:crypto';
import { labelSelectorFromHostSelector, type HostSelector as LabelTerms } from '../api/label-selector.js';
import { hostKeys, provisioningState, type BareMetalHost, type HostDeployPolicy } from '../metal3/types.js';
import { boundRecord, isFree } from './host-references.js';
import { admittingPolicies, type TenantNamespace } from './policy.js';

export interface HostSelector extends LabelTerms {
  readonly inNamespace?: string;
}

/** What of a claim's spec selection depends on. */
export interface SelectionRequest {
  readonly namespace: TenantNamespace;
  readonly hostSelector?: HostSelector;
  readonly failureDomain?: string;
  readonly nodeReuse?: string;
}

/**
 * Hosts still bound to a claim of a node-reuse pool that is being deleted,
 * by host key, with the pool's label value: the release labels such a host
 * only once it gets to strip it, so until then only this says the host is
 * the pool's.
 */
export type ReleasingPoolHosts = ReadonlyMap<string, string>;

export type Selection =
  | { readonly kind: 'selected'; readonly host: BareMetalHost }
  | { readonly kind: 'none'; readonly reason: 'NoAdmittingPolicy' | 'NoBareMetalHost' | 'WaitingForNodeReuseHost' };

const availableStates = new Set(['available', 'ready']);
const maxLabelValueLength = 63;

/**
 * The hosts selection looks at (host-index.ts keeps them from the shared
 * host cache's events).
 */
export interface SelectableHosts {
  /** The candidates (isCandidate) of one host namespace, in compareHostKeys order. */
  candidates(hostNamespace: string): readonly BareMetalHost[];
  /** The hosts carrying this node-reuse label value, in any order. */
  labelled(pool: string): readonly BareMetalHost[];
  host(key: string): BareMetalHost | undefined;
}

/**
 * Picks a free host for the claim, or says why there is none, following
 * CAPM3's node reuse (metal3machine_manager.go chooseHost), which the
 * HostClaim design adopts:
 * - a host carrying a node-reuse label is kept for that pool: claims of
 *   another pool or of none never take it (its disks may hold the pool's
 *   data);
 * - a claim of pool P takes an available host labelled P; if P's labelled
 *   host exists but is not available yet (being released or
 *   deprovisioned), the claim waits for it rather than taking another;
 * - a host still bound to a deleted claim of pool P is P's host already
 *   (`releasing`): a claim created right after that deletion waits for it
 *   even when the binder has not labelled it yet;
 * - only when no host carries P's label does it take any unlabelled host.
 * Then the failure domain is preferred, then name order (so results are
 * reproducible). Hosts in `reserved` are being bound to other claims now.
 */
export function selectHost(
  request: SelectionRequest,
  hosts: SelectableHosts,
  policies: readonly HostDeployPolicy[],
  reserved: ReadonlySet<string>,
  releasing: ReleasingPoolHosts = new Map(),
): Selection {
  const admitted = admittedHostNamespaces(request, policies);
  if (admitted.size === 0) return { kind: 'none', reason: 'NoAdmittingPolicy' };
  // Parsed once per claim, not once per host.
  const selected = selectorMatcher(request.hostSelector);
  const eligible = (host: BareMetalHost): boolean => admitted.has(host.metadata.namespace ?? '') && selected(host) && !reserved.has(hostKey(host));
  const pool = poolLabelValue(request);
  const takeable = (host: BareMetalHost): boolean => poolAllows(host, pool) && eligible(host);
  if (pool !== undefined) {
    const poolHost = preferred(
      hosts.labelled(pool).filter((host) => isCandidate(host) && takeable(host)),
      request,
    );
    if (poolHost !== undefined) return { kind: 'selected', host: poolHost };
    if (comingBackCandidates(hosts, pool, releasing).some((host) => isComingBack(host, pool, releasing) && eligible(host))) {
      return { kind: 'none', reason: 'WaitingForNodeReuseHost' };
    }
  }
  // Each namespace's candidates come in name order: its preferred host is the first it may take (of the failure domain, if any).
  const firsts = [...admitted].map((namespace) => firstPreferred(hosts.candidates(namespace), takeable, request)).filter((host) => host !== undefined);
  const host = preferred(firsts, request);
  return host === undefined ? { kind: 'none', reason: 'NoBareMetalHost' } : { kind: 'selected', host };
}

/** The hosts that may be on their way back to the pool: those labelled for it, and those a deleted claim of the pool still holds. */
function comingBackCandidates(hosts: SelectableHosts, pool: string, releasing: ReleasingPoolHosts): BareMetalHost[] {
  const held = [...releasing].filter(([, label]) => label === pool).map(([key]) => hosts.host(key));
  return [...hosts.labelled(pool), ...held.filter((host) => host !== undefined)];
}

/**
 * Whether the host's node-reuse label lets this claim take it: no label, or
 * the label of the claim's own pool.
 */
export function mayTake(host: BareMetalHost, request: SelectionRequest): boolean {
  return poolAllows(host, poolLabelValue(request));
}

/** mayTake for the pool's label value (computed once per claim, not once per host). */
function poolAllows(host: BareMetalHost, pool: string | undefined): boolean {
  const label = host.metadata.labels?.[hostKeys.nodeReuse];
  return label === undefined || label === pool;
}

/** The label value of the claim's node-reuse pool, if it names one. */
function poolLabelValue(request: SelectionRequest): string | undefined {
  const { nodeReuse } = request;
  return nodeReuse === undefined || nodeReuse === '' ? undefined : nodeReuseLabelValue(request.namespace.name, nodeReuse);
}

/**
 * A host of the pool that is not a candidate yet but is on its way back:
 * free or still held by one of our claims that is releasing it (the binder
 * labels the host when it strips the workload, before BMO deprovisions; a
 * host whose deleted claim the binder has not reached yet is known from
 * `releasing`), not being deleted, without error and not marked unhealthy.
 * A host in error is not waited for (CAPM3 skips it too).
 */
function isComingBack(host: BareMetalHost, pool: string, releasing: ReleasingPoolHosts): boolean {
  return (
    (releasing.get(hostKey(host)) ?? host.metadata.labels?.[hostKeys.nodeReuse]) === pool &&
    (isFree(host) || boundRecord(host) !== undefined) &&
    host.metadata.deletionTimestamp === undefined &&
    (host.status?.errorMessage ?? '') === '' &&
    !(hostKeys.unhealthy in (host.metadata.annotations ?? {}))
  );
}

/** The failure domain first, then name order; undefined for no hosts. One pass, not a sort. */
function preferred(hosts: readonly BareMetalHost[], request: SelectionRequest): BareMetalHost | undefined {
  const rank = (host: BareMetalHost): number => (inDomain(host, request) ? 0 : 1);
  let best: BareMetalHost | undefined;
  for (const host of hosts) {
    if (best === undefined || (rank(host) - rank(best) || compareHostKeys(hostKey(host), hostKey(best))) < 0) best = host;
  }
  return best;
}

/**
 * preferred() of the hosts that pass `keep`, when they come in name order:
 * the first of the failure domain, or the first at all, is the one, so the
 * walk stops there rather than looking at every candidate.
 */
function firstPreferred(hosts: readonly BareMetalHost[], keep: (host: BareMetalHost) => boolean, request: SelectionRequest): BareMetalHost | undefined {
  const anyDomain = request.failureDomain === undefined || request.failureDomain === '';
  let first: BareMetalHost | undefined;
  for (const host of hosts) {
    if (!keep(host)) continue;
    if (anyDomain || inDomain(host, request)) return host;
    first ??= host;
  }
  return first;
}

function inDomain(host: BareMetalHost, request: SelectionRequest): boolean {
  const domain = request.failureDomain;
  return domain !== undefined && domain !== '' && host.metadata.labels?.[hostKeys.failureDomain] === domain;
}

/**
 * The name order of hosts: their keys (`<namespace>/<name>`) by code point.
 * Keys are DNS names (lowercase letters, digits, '-', '.') joined by '/', and
 * on that alphabet this is the order localeCompare gave under ICU's root
 * collation ('-' < '.' < '/' < digits < letters), which selection used
 * before. It does not depend on the process's locale, as a collator does,
 * and it spares the server ICU's collation data (3.4 MB less mapped memory
 * at issue #12's scenario).
 */
export function compareHostKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The host namespaces whose policies admit the claim's namespace, narrowed by `inNamespace`. */
export function admittedHostNamespaces(request: SelectionRequest, policies: readonly HostDeployPolicy[]): Set<string> {
  const namespaces = new Set(admittingPolicies(policies, request.namespace).keys());
  const only = request.hostSelector?.inNamespace;
  if (only === undefined || only === '') return namespaces;
  return namespaces.has(only) ? new Set([only]) : new Set();
}

/** Free, ready for a workload and not set aside by the admins (the filter CAPM3 and BMO use). */
export function isCandidate(host: BareMetalHost): boolean {
  const annotations = host.metadata.annotations ?? {};
  return (
    isFree(host) &&
    host.metadata.deletionTimestamp === undefined &&
    availableStates.has(provisioningState(host)) &&
    (host.status?.errorMessage ?? '') === '' &&
    host.status?.operationalStatus !== 'detached' &&
    !(hostKeys.paused in annotations) &&
    !(hostKeys.detached in annotations) &&
    !(hostKeys.unhealthy in annotations)
  );
}

/** The claim's label terms on the host's labels; a selector the API would have rejected matches nothing. */
export function matchesSelector(host: BareMetalHost, selector: HostSelector | undefined): boolean {
  return selectorMatcher(selector)(host);
}

function selectorMatcher(selector: HostSelector | undefined): (host: BareMetalHost) => boolean {
  try {
    const parsed = labelSelectorFromHostSelector(selector);
    return (host) => parsed.matches(host.metadata.labels ?? {});
  } catch {
    return () => false;
  }
}

export function hostKey(host: BareMetalHost): string {
  return `${host.metadata.namespace ?? ''}/${host.metadata.name}`;
}

/**
 * The node-reuse label value for a tenant namespace and pool. The design's
 * `<namespace>+<pool>` is not a valid label value; `<namespace>.<pool>` is
 * unambiguous (namespaces have no dots) and used when it is a valid value,
 * otherwise a digest of both.
 */
export function nodeReuseLabelValue(namespace: string, pool: string): string {
  const readable = `${namespace}.${pool}`;
  if (readable.length <= maxLabelValueLength && /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(readable)) return readable;
  return `h-${createHash('sha256').update(`${namespace}/${pool}`).digest('hex').slice(0, 56)}`;
}
