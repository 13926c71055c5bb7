/**
 * The claim's status, derived from the binding and the host. Condition types
 * are upstream's (Associated, Synchronized, Provisioned, Ready) plus
 * Authorized. Reasons and messages are written for tenants: they never
 * contain a host name the tenant may not see, BMC details, or the host's raw
 * error text (Ironic messages carry BMC addresses); the raw text stays on
 * the BareMetalHost, and on the record for infrastructure admins
 * (`hostErrorText`, resources/hostclaim/projection.ts).
 */
import { provisioningState, type BareMetalHost } from '../../metal3/types.js';
import { sameJson } from '../../backing/json.js';
import { withoutBmcDetails } from '../../tenancy/bmc-details.js';
import { hardwareDataName } from '../../tenancy/host-references.js';
import type { Claim, Condition, HostClaimStatus } from './claim.js';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** Why a claim has no host. */
export type UnboundReason = 'NoAdmittingPolicy' | 'NoBareMetalHost' | 'WaitingForNodeReuseHost' | 'MissingBareMetalHost' | 'BindingEnded';

const unboundMessages: Record<UnboundReason, string> = {
  NoAdmittingPolicy: 'No HostDeployPolicy admits HostClaims from this namespace; ask your infrastructure administrator.',
  NoBareMetalHost:
    'No available host matches the claim among the hosts this namespace may use (hosts kept for another node-reuse pool are not taken); the claim is bound as soon as one is.',
  WaitingForNodeReuseHost:
    'The host released by this claim\'s node-reuse pool is not available yet (its previous workload is being removed); the claim is bound to it once it is.',
  MissingBareMetalHost: 'The bound host was removed by the infrastructure administrator; the workload is gone. Delete the claim and create a new one.',
  BindingEnded: 'The infrastructure administrator took the host back; the workload is gone. Delete the claim and create a new one.',
};

/** Tenant-safe messages for BMO's errorType values (the raw errorMessage is never copied). */
const errorMessages: Record<string, string> = {
  'registration error': 'The host could not be registered with its management controller.',
  'provisioned registration error': 'The host could not be re-registered with its management controller.',
  'inspection error': 'Hardware inspection of the host failed.',
  'preparation error': 'Preparing the host (cleaning, RAID, firmware settings) failed.',
  'provisioning error': 'Deploying the image failed; check the image URL, checksum and format.',
  'power management error': 'Changing the power state of the host failed.',
  'detach error': 'Detaching the host failed.',
  'servicing error': 'Servicing the host failed.',
};
const genericError = 'The host reported an error.';

export function sanitizedHostError(host: BareMetalHost): string | undefined {
  const type = host.status?.errorType ?? '';
  const message = host.status?.errorMessage ?? '';
  if (type === '' && message === '') return undefined;
  return `${errorMessages[type] ?? genericError} The infrastructure administrator can see the details.`;
}

/** The host's own error text for infrastructure admins, its BMC address and credentials name replaced; undefined without one. */
export function hostErrorText(host: BareMetalHost): string | undefined {
  const message = host.status?.errorMessage ?? '';
  return message === '' ? undefined : withoutBmcDetails(message, host);
}

export function unboundConditions(reason: UnboundReason): ConditionInput[] {
  const message = unboundMessages[reason];
  return [
    { type: 'Associated', status: 'False', reason, message },
    { type: 'Ready', status: 'False', reason: 'NotAssociated', message: 'The claim has no host.' },
  ];
}

export interface BoundState {
  readonly authorized: boolean;
  /** Undefined when every referenced Secret was copied; otherwise the tenant-facing problem. */
  readonly syncProblem?: { readonly reason: string; readonly message: string };
}

export function boundConditions(claim: Claim, host: BareMetalHost, state: BoundState): ConditionInput[] {
  const associated: ConditionInput = { type: 'Associated', status: 'True', reason: 'BareMetalHostAssociated', message: 'The claim is bound to a host.' };
  const authorized: ConditionInput = state.authorized
    ? { type: 'Authorized', status: 'True', reason: 'PolicyAdmits', message: 'A HostDeployPolicy admits this namespace on the host.' }
    : {
        type: 'Authorized',
        status: 'False',
        reason: 'PolicyRevoked',
        message: 'No HostDeployPolicy admits this namespace on the host any more; the workload keeps running until the claim is deleted.',
      };
  const synchronized: ConditionInput =
    state.syncProblem === undefined
      ? { type: 'Synchronized', status: 'True', reason: 'ConfigurationSynced', message: 'The host carries the claim configuration.' }
      : { type: 'Synchronized', status: 'False', ...state.syncProblem };
  const provisioned = provisionedCondition(claim, host);
  const poweredOk = (host.status?.poweredOn ?? false) === (claim.spec.poweredOn ?? false);
  const ready: ConditionInput =
    synchronized.status === 'True' && provisioned.status === 'True' && poweredOk
      ? { type: 'Ready', status: 'True', reason: 'Ready', message: 'The workload is deployed and the host is in the requested power state.' }
      : { type: 'Ready', status: 'False', reason: notReadyReason(synchronized, provisioned), message: 'The host is not yet in the state the claim asks for.' };
  return [associated, authorized, synchronized, provisioned, ready];
}

function notReadyReason(synchronized: ConditionInput, provisioned: ConditionInput): string {
  if (synchronized.status !== 'True') return synchronized.reason;
  if (provisioned.status !== 'True') return provisioned.reason;
  return 'PowerStatePending';
}

function provisionedCondition(claim: Claim, host: BareMetalHost): ConditionInput {
  const error = sanitizedHostError(host);
  if (error !== undefined) return { type: 'Provisioned', status: 'False', reason: 'HostError', message: error };
  const state = provisioningState(host);
  const wantsWorkload = (claim.spec.image?.url ?? '') !== '' || (claim.spec.customDeploy?.method ?? '') !== '';
  if (state === 'provisioned') return { type: 'Provisioned', status: 'True', reason: 'Provisioned', message: 'The workload is deployed.' };
  if (!wantsWorkload) return { type: 'Provisioned', status: 'False', reason: 'NoWorkload', message: 'The claim sets neither an image nor a custom deploy method.' };
  if (state === 'provisioning') return { type: 'Provisioned', status: 'False', reason: 'Provisioning', message: 'The workload is being deployed.' };
  if (state === 'deprovisioning') return { type: 'Provisioned', status: 'False', reason: 'Deprovisioning', message: 'The previous workload is being removed.' };
  if (!(claim.spec.poweredOn ?? false)) {
    return { type: 'Provisioned', status: 'False', reason: 'PoweredOffRequested', message: 'The workload is deployed once the claim asks for the host to be powered on.' };
  }
  return { type: 'Provisioned', status: 'False', reason: 'Waiting', message: 'Waiting for the host to start deploying the workload.' };
}

/**
 * The next status: conditions keep their lastTransitionTime while their
 * status is unchanged (as metav1 conditions do); `lastUpdated` moves only
 * when something else changed, so an idle claim is never rewritten.
 */
export function nextStatus(claim: Claim, inputs: readonly ConditionInput[], binding: Pick<HostClaimStatus, 'bareMetalHost' | 'poweredOn'>, now: string): HostClaimStatus {
  const previous = claim.status.conditions ?? [];
  const conditions: Condition[] = inputs.map((input) => {
    const before = previous.find((c) => c.type === input.type);
    const since = before !== undefined && before.status === input.status ? before.lastTransitionTime : now;
    return { ...input, lastTransitionTime: since ?? now, observedGeneration: claim.generation };
  });
  const host = binding.bareMetalHost;
  const status: HostClaimStatus = {
    conditions,
    ...(host === undefined ? {} : { bareMetalHost: host, hardwareData: { namespace: claim.namespace, name: hardwareDataName(host.namespace, host.name) } }),
    ...(binding.poweredOn === undefined ? {} : { poweredOn: binding.poweredOn }),
  };
  const unchanged = sameJson({ ...claim.status, lastUpdated: undefined }, { ...status, lastUpdated: undefined });
  return { ...status, lastUpdated: unchanged ? (claim.status.lastUpdated ?? now) : now };
}

