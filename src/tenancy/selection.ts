/**
 * Which hosts a claim may be bound to, and which of them it gets. Pure
 * functions over informer state: the binder re-checks the chosen host
 * against kube-apiserver when it writes the binding (resourceVersion
 * precondition), so a stale cache can cost a retry, never a double binding.
 */
import { createHash } from 'node:crypto';
import { labelSelectorFromHostSelector, type HostSelector as LabelTerms } from '../api/selectors.js';
import { hostKeys, provisioningState, type BareMetalHost, type HostDeployPolicy } from '../metal3/types.js';
import { isFree } from './host-references.js';
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

export type Selection =
  | { readonly kind: 'selected'; readonly host: BareMetalHost }
  | { readonly kind: 'none'; readonly reason: 'NoAdmittingPolicy' | 'NoBareMetalHost' };

const availableStates = new Set(['available', 'ready']);
const maxLabelValueLength = 63;

/**
 * Picks the best free host for the claim, or says why there is none. Hosts
 * in `reserved` are being bound to other claims right now. Preference: the
 * claim's node-reuse pool, then its failure domain, then name order (so
 * results are reproducible).
 */
export function selectHost(
  request: SelectionRequest,
  hosts: readonly BareMetalHost[],
  policies: readonly HostDeployPolicy[],
  reserved: ReadonlySet<string>,
): Selection {
  const admitted = admittedHostNamespaces(request, policies);
  if (admitted.size === 0) return { kind: 'none', reason: 'NoAdmittingPolicy' };
  const candidates = hosts.filter(
    (host) => admitted.has(host.metadata.namespace ?? '') && !reserved.has(hostKey(host)) && isCandidate(host) && matchesSelector(host, request.hostSelector),
  );
  if (candidates.length === 0) return { kind: 'none', reason: 'NoBareMetalHost' };
  const reuse = request.nodeReuse === undefined || request.nodeReuse === '' ? undefined : nodeReuseLabelValue(request.namespace.name, request.nodeReuse);
  const rank = (host: BareMetalHost): number =>
    (reuse !== undefined && host.metadata.labels?.[hostKeys.nodeReuse] === reuse ? 0 : 2) +
    (request.failureDomain !== undefined && request.failureDomain !== '' && host.metadata.labels?.[hostKeys.failureDomain] === request.failureDomain ? 0 : 1);
  const [best] = [...candidates].sort((a, b) => rank(a) - rank(b) || hostKey(a).localeCompare(hostKey(b)));
  return best === undefined ? { kind: 'none', reason: 'NoBareMetalHost' } : { kind: 'selected', host: best };
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
  try {
    return labelSelectorFromHostSelector(selector).matches(host.metadata.labels ?? {});
  } catch {
    return false;
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
