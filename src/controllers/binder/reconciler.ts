/**
 * One leadership term's reconciliation of a claim (binder.ts routes events
 * and runs the queue): bind a claim to a host, keep the bound host in line
 * with the claim and mirror it into the claim's status, and give the host
 * back when the claim goes away. The invariants are binder.ts's.
 */
import type { ApiObject } from '../../api/rest/types.js';
import type { EventRecorder, EventType } from '../../backing/events.js';
import { sameJson } from '../../backing/json.js';
import { isConflict, type KubeClient } from '../../backing/kube-client.js';
import type { SharedInformer } from '../../backing/shared-informers.js';
import type { Logger } from '../../observability/logger.js';
import { hostErrorAnnotation } from '../../resources/hostclaim/storage.js';
import { hostKeys, metal3GroupVersion, provisioningState, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../metal3/types.js';
import { boundRecord } from '../../tenancy/host-references.js';
import { admits, allowsDetaching, tenantNamespace } from '../../tenancy/policy.js';
import { hostKey, type SelectionRequest } from '../../tenancy/selection.js';
import type { ReconcileResult } from '../work-queue.js';
import { splitKey, type BinderWrites } from './binder-writes.js';
import { bindingAnnotations, claimOf, hasReleaseFinalizer, releaseFinalizer, releaseLabel, type Claim, type HostClaimStatus } from './claim.js';
import type { HostChoice } from './host-choice.js';
import { bindingPatch, rebootHandled, withoutWorkload, withWorkload } from './host-spec.js';
import { copyIndex } from './indexes.js';
import { deleteSecretCopies, syncSecretCopies } from './secret-copies.js';
import { boundConditions, hostErrorText, nextStatus, unboundConditions, type ConditionInput, type UnboundReason } from './status.js';

/** States in which BMO has not yet started taking a workload off the host. */
const workloadStates = new Set(['provisioning', 'provisioned', 'externally provisioned']);
/**
 * Claims waiting on baremetal-operator (a release in progress, a pool host
 * coming back) are requeued by host events; they are also checked again
 * after this long, as controller-runtime's RequeueAfter, so an interleaving
 * of two releases that no event maps back to the waiting claim cannot leave
 * it waiting for good.
 */
const waitingRecheckMs = 10_000;

/**
 * The process's shared caches the binder reads. BareMetalHosts and
 * HostDeployPolicies are optional: without baremetal-operator's CRDs there
 * are none, and nothing is bound.
 */
export interface BinderCaches {
  readonly hosts: SharedInformer<BareMetalHost>;
  readonly policies: SharedInformer<HostDeployPolicy>;
  readonly namespaces: SharedInformer<Namespace>;
  readonly records: SharedInformer<ApiObject>;
  readonly secrets: SharedInformer<ApiObject>;
}

export interface ReconcilerDependencies {
  readonly client: KubeClient;
  readonly writes: BinderWrites;
  readonly events: EventRecorder;
  readonly logger: Logger;
  readonly storageNamespace: string;
}

export class ClaimReconciler {
  private ended = false;

  constructor(
    private readonly term: { readonly informers: BinderCaches; readonly choice: HostChoice },
    private readonly deps: ReconcilerDependencies,
  ) {}

  /** The term is over: a reconcile still in flight stops at its next step. */
  end(): void {
    this.ended = true;
  }

  async reconcileClaim(key: string): Promise<ReconcileResult> {
    const record = await this.writes.currentRecord(key, this.caches().records, this.storageNamespace);
    const claim = record === undefined ? undefined : claimOf(record);
    if (claim === undefined) return undefined;
    if (claim.deleting) return this.release(claim);
    const host = await this.boundHost(claim);
    if (host !== undefined) return this.sync(claim, host);
    if (claim.ended !== undefined) return this.writeStatus(claim, unboundConditions(claim.ended as UnboundReason), {});
    if (claim.status.bareMetalHost !== undefined) return this.endBinding(claim);
    return this.bind(claim);
  }

  // ---------------------------------------------------------------- binding

  private async bind(claim: Claim): Promise<ReconcileResult> {
    const choice = this.choice();
    const request = choice.request(claim);
    const chosen = claim.chosenHost === undefined ? undefined : this.caches().hosts.get(...splitKey(claim.chosenHost));
    let host: BareMetalHost | undefined;
    if (chosen !== undefined && choice.suitable(chosen, request)) host = chosen;
    else {
      if (claim.chosenHost !== undefined) return this.forgetChoice(claim);
      const selection = choice.select(claim, request);
      if (selection.kind === 'none') {
        await this.writeStatus(claim, unboundConditions(selection.reason), {});
        return selection.reason === 'WaitingForNodeReuseHost' ? { requeueAfterMs: waitingRecheckMs } : undefined;
      }
      host = selection.host;
    }
    const keyOfHost = hostKey(host);
    // The reservation lasts until the host informer shows the binding (onHostChange), or the attempt fails.
    choice.reserve(keyOfHost, claim.identity.name);
    let bound: { claim: Claim; host: BareMetalHost } | undefined;
    try {
      bound = await this.bindChosen(claim, keyOfHost, request);
    } finally {
      if (bound === undefined) choice.unreserve(keyOfHost);
    }
    // Bound: sync and status go on from the record and host as written (kube-apiserver's answers), without a trip through the queue.
    return bound === undefined ? { requeueAfterMs: 0 } : this.sync(bound.claim, bound.host);
  }

  /** Records the choice, then takes the host's lock; undefined when the record changed or the host turned out to be unavailable. */
  private async bindChosen(claim: Claim, keyOfHost: string, request: SelectionRequest): Promise<{ claim: Claim; host: BareMetalHost } | undefined> {
    const updated = await this.recordIntent(claim, keyOfHost);
    if (updated === undefined) return undefined;
    const written = await this.takeHost(keyOfHost, updated, request);
    if (written === undefined) {
      await this.forgetChoice(updated);
      return undefined;
    }
    this.event(updated, 'Normal', 'Bound', `Bound to host ${keyOfHost}.`);
    return { claim: updated, host: written };
  }

  /**
   * Sets the host's consumerRef, judged suitable on the cached host and
   * written with that host's resourceVersion as precondition: kube-apiserver
   * applies it only to the very version judged (free, admitted, matching),
   * so no cache lag can bind a host twice. A cache behind the host (409)
   * costs one fresh read and a second attempt. Undefined when the host is
   * gone or not suitable.
   */
  private async takeHost(keyOfHost: string, claim: Claim, request: SelectionRequest): Promise<BareMetalHost | undefined> {
    const cached = this.caches().hosts.get(...splitKey(keyOfHost));
    if (cached === undefined || !this.choice().suitable(cached, request)) return undefined;
    try {
      return await this.writes.patchHost(cached, bindingPatch(cached, claim), claim);
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    const fresh = await this.writes.host(keyOfHost);
    if (fresh === undefined || !this.choice().suitable(fresh, request)) return undefined;
    // A second conflict is an error: the reconcile is retried with backoff, from the record's chosen host.
    return this.writes.patchHost(fresh, bindingPatch(fresh, claim), claim);
  }

  /** Writes the chosen host and the release finalizer on the record; undefined if the record changed meanwhile. */
  private async recordIntent(claim: Claim, keyOfHost: string): Promise<Claim | undefined> {
    if (claim.chosenHost === keyOfHost && hasReleaseFinalizer(claim)) return claim;
    const record = structuredClone(claim.record);
    record.metadata.annotations = { ...record.metadata.annotations, [bindingAnnotations.host]: keyOfHost };
    record.metadata.finalizers = [...new Set([...(record.metadata.finalizers ?? []), releaseFinalizer])];
    const written = await this.writes.writeRecord(record);
    return written === undefined ? undefined : claimOf(written);
  }

  private async forgetChoice(claim: Claim): Promise<ReconcileResult> {
    const record = structuredClone(claim.record);
    const annotations = { ...record.metadata.annotations };
    Reflect.deleteProperty(annotations, bindingAnnotations.host);
    record.metadata.annotations = annotations;
    await this.writes.writeRecord(record);
    return { requeueAfterMs: 0 };
  }

  /** The host bound to this claim, read fresh: the chosen host if its consumerRef names this record. */
  private async boundHost(claim: Claim): Promise<BareMetalHost | undefined> {
    if (claim.chosenHost === undefined) return undefined;
    const host = await this.writes.host(claim.chosenHost);
    return host !== undefined && boundRecord(host)?.uid === claim.identity.uid ? host : undefined;
  }

  /** The claim was bound and its host is gone or no longer ours: the binding ends, it is not silently replaced. */
  private async endBinding(claim: Claim): Promise<ReconcileResult> {
    const chosen = claim.chosenHost;
    const exists = chosen !== undefined && (await this.writes.host(chosen)) !== undefined;
    const reason: UnboundReason = exists ? 'BindingEnded' : 'MissingBareMetalHost';
    const hostNamespace = chosen === undefined ? undefined : splitKey(chosen)[0];
    if (hostNamespace !== undefined) await deleteSecretCopies(this.client, claim.identity.uid, hostNamespace);
    const record = structuredClone(claim.record);
    record.metadata.annotations = { ...record.metadata.annotations, [bindingAnnotations.ended]: reason };
    const written = await this.writes.writeRecord(record);
    if (written !== undefined) this.event(claim, 'Warning', reason, unboundConditions(reason)[0]?.message ?? '');
    return { requeueAfterMs: 0 };
  }

  // ------------------------------------------------------------ workload sync

  private async sync(claim: Claim, boundHost: BareMetalHost): Promise<ReconcileResult> {
    let host = boundHost;
    const informers = this.caches();
    const hostNamespace = host.metadata.namespace ?? '';
    const namespace = tenantNamespace(informers.namespaces.get(undefined, claim.namespace), claim.namespace);
    const admitting = informers.policies.list().filter((p) => p.metadata.namespace === hostNamespace && admits(p, namespace));
    const authorized = admitting.length > 0;
    if (rebootHandled(host, claim)) return this.clearReboot(claim);
    const { copies, problem } = await syncSecretCopies(this.client, claim, hostNamespace, {
      copies: informers.secrets.byIndex(copyIndex.name, `${hostNamespace}/${claim.identity.uid}`).map((secret) => secret.metadata.name ?? ''),
      get: (namespace, name) => informers.secrets.get(namespace, name),
    });
    if (problem === undefined) {
      const desired = withWorkload(host, claim, copies, { detachAllowed: allowsDetaching(admitting) });
      if (!sameJson(desired, host)) {
        const written = await this.writes.writeHost(desired, claim);
        this.workloadEvents(claim, host, desired);
        // kube-apiserver saw nothing to change: our idea of the host differs from its normal form. Go on rather than loop.
        if (written.metadata.resourceVersion === host.metadata.resourceVersion) this.deps.logger.warn({ host: hostKey(host) }, 'binder: host write changed nothing');
        // The status goes on from the host as written, kube-apiserver's answer: as fresh as a read.
        host = written;
      }
    }
    if (!authorized && claim.status.conditions?.find((c) => c.type === 'Authorized')?.status !== 'False') {
      this.deps.events.record(
        { apiVersion: metal3GroupVersion, kind: 'BareMetalHost', namespace: hostNamespace, name: host.metadata.name, ...(host.metadata.uid === undefined ? {} : { uid: host.metadata.uid }) },
        'Warning',
        'PolicyRevoked',
        `No HostDeployPolicy admits namespace ${claim.namespace} any more; the host stays bound to its claim until the claim is deleted.`,
      );
    }
    // The text first: a status showing the error is then never without it for admins.
    if (claim.annotations[hostErrorAnnotation] !== hostErrorText(host)) return this.recordHostError(claim, hostErrorText(host));
    const conditions = boundConditions(claim, host, { authorized, ...(problem === undefined ? {} : { syncProblem: problem }) });
    const binding = { bareMetalHost: { namespace: hostNamespace, name: host.metadata.name }, ...(host.status?.poweredOn === undefined ? {} : { poweredOn: host.status.poweredOn }) };
    return this.writeStatus(claim, conditions, binding);
  }

  /** Keeps the host's error text on the record (the controller annotation only the server reads). */
  private async recordHostError(claim: Claim, text: string | undefined): Promise<ReconcileResult> {
    const record = structuredClone(claim.record);
    const annotations = { ...record.metadata.annotations };
    if (text === undefined) Reflect.deleteProperty(annotations, hostErrorAnnotation);
    else annotations[hostErrorAnnotation] = text;
    record.metadata.annotations = annotations;
    await this.writes.writeRecord(record);
    return { requeueAfterMs: 0 };
  }

  private async clearReboot(claim: Claim): Promise<ReconcileResult> {
    const record = structuredClone(claim.record);
    const annotations = { ...record.metadata.annotations };
    Reflect.deleteProperty(annotations, hostKeys.reboot);
    record.metadata.annotations = annotations;
    if ((await this.writes.writeRecord(record)) !== undefined) this.event(claim, 'Normal', 'Rebooted', 'The host rebooted as requested; the reboot annotation was cleared.');
    return { requeueAfterMs: 0 };
  }

  private workloadEvents(claim: Claim, before: BareMetalHost, after: BareMetalHost): void {
    if (before.spec.online !== after.spec.online) this.event(claim, 'Normal', after.spec.online === true ? 'PowerOn' : 'PowerOff', `Powering the host ${after.spec.online === true ? 'on' : 'off'}.`);
    if ((before.spec.image?.url ?? '') === '' && (after.spec.image?.url ?? '') !== '') this.event(claim, 'Normal', 'Provisioning', 'Deploying the image on the host.');
    if ((before.spec.image?.url ?? '') !== '' && (after.spec.image?.url ?? '') === '') this.event(claim, 'Normal', 'Deprovisioning', 'Removing the workload from the host.');
    if (!(hostKeys.reboot in (before.metadata.annotations ?? {})) && hostKeys.reboot in (after.metadata.annotations ?? {})) {
      this.event(claim, 'Normal', 'RebootRequested', 'The reboot request was passed to the host.');
    }
  }

  // ------------------------------------------------------------------ release

  private async release(claim: Claim): Promise<ReconcileResult> {
    if (!hasReleaseFinalizer(claim)) return undefined;
    const host = await this.boundHost(claim);
    if (host !== undefined) {
      const waiting = await this.deprovision(host, claim);
      if (waiting) return { requeueAfterMs: waitingRecheckMs };
      this.event(claim, 'Normal', 'Released', `Host ${hostKey(host)} released.`);
    }
    if (claim.chosenHost !== undefined) await deleteSecretCopies(this.client, claim.identity.uid, splitKey(claim.chosenHost)[0]);
    const record = structuredClone(claim.record);
    record.metadata.finalizers = (record.metadata.finalizers ?? []).filter((f) => f !== releaseFinalizer);
    await this.writes.writeRecord(record);
    return undefined;
  }

  /**
   * Takes the workload off the host and, once BMO has started doing so,
   * clears the binding. True while waiting for BMO (host events requeue).
   */
  private async deprovision(host: BareMetalHost, claim: Claim | undefined): Promise<boolean> {
    const stripped = withoutWorkload(host, claim === undefined ? undefined : releaseLabel(claim));
    let current = host;
    if (!sameJson(stripped, host)) {
      // Judged next from the host as written (kube-apiserver's answer), not after a trip through the queue: its echo does not requeue.
      current = await this.writes.writeHost(stripped, claim);
      if (claim !== undefined) this.event(claim, 'Normal', 'Deprovisioning', 'Removing the workload from the host before releasing it.');
    }
    if (workloadStates.has(provisioningState(current))) return true;
    const next = structuredClone(current);
    Reflect.deleteProperty(next.spec, 'consumerRef');
    await this.writes.writeHost(next, claim);
    return false;
  }

  async releaseOrphan(keyOfHost: string): Promise<ReconcileResult> {
    const host = await this.writes.host(keyOfHost);
    const bound = host === undefined ? undefined : boundRecord(host);
    if (host === undefined || bound?.namespace !== this.storageNamespace) return undefined;
    const record = await this.writes.record(bound.name);
    if (record?.metadata.uid === bound.uid) return undefined;
    this.deps.logger.info({ host: keyOfHost }, 'binder: releasing a host whose claim no longer exists');
    if (await this.deprovision(host, undefined)) return { requeueAfterMs: waitingRecheckMs };
    await deleteSecretCopies(this.client, bound.uid, host.metadata.namespace ?? '');
    return undefined;
  }

  // ------------------------------------------------------------------ status

  private async writeStatus(claim: Claim, conditions: readonly ConditionInput[], binding: Pick<HostClaimStatus, 'bareMetalHost' | 'poweredOn'>): Promise<ReconcileResult> {
    const status = nextStatus(claim, conditions, binding, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    if (sameJson(status, claim.status)) return undefined;
    // Events only for a status that was written: a conflict is retried, and would announce the same change twice.
    if ((await this.writes.writeRecord({ ...claim.record, status }, '/status')) !== undefined) this.transitionEvents(claim, status);
    return undefined;
  }

  /** Events for condition changes a tenant cares about (binding problems, provisioned, ready). */
  private transitionEvents(claim: Claim, status: HostClaimStatus): void {
    const before = new Map((claim.status.conditions ?? []).map((c) => [c.type, c]));
    for (const condition of status.conditions ?? []) {
      const previous = before.get(condition.type);
      if (previous?.status === condition.status && previous.reason === condition.reason) continue;
      if (condition.type === 'Associated' && condition.status === 'False') this.event(claim, 'Warning', condition.reason, condition.message);
      if (condition.type === 'Provisioned' && (condition.status === 'True' || condition.reason === 'HostError')) {
        this.event(claim, condition.status === 'True' ? 'Normal' : 'Warning', condition.reason, condition.message);
      }
      if (condition.type === 'Authorized' && condition.status === 'False') this.event(claim, 'Warning', condition.reason, condition.message);
    }
    // A change of power state, not its first report at binding (one Event less per claim; Bound says the host was taken).
    if (status.poweredOn !== undefined && claim.status.poweredOn !== undefined && status.poweredOn !== claim.status.poweredOn) {
      this.event(claim, 'Normal', status.poweredOn ? 'PoweredOn' : 'PoweredOff', `The host is powered ${status.poweredOn ? 'on' : 'off'}.`);
    }
  }

  private event(claim: Claim, type: EventType, reason: string, message: string): void {
    this.deps.events.record({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', namespace: claim.namespace, name: claim.name, uid: claim.uid }, type, reason, message);
  }

  private caches(): BinderCaches {
    if (this.ended) throw new Error('binder is not running');
    return this.term.informers;
  }

  private choice(): HostChoice {
    if (this.ended) throw new Error('binder is not running');
    return this.term.choice;
  }

  private get writes(): BinderWrites {
    return this.deps.writes;
  }

  private get client(): KubeClient {
    return this.deps.client;
  }

  private get storageNamespace(): string {
    return this.deps.storageNamespace;
  }
}
