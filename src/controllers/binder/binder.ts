/**
 * The binder: binds HostClaims to BareMetalHosts, keeps each bound host in
 * line with its claim, mirrors the host's state into the claim's status, and
 * gives the host back when the claim goes away. It runs only on the replica
 * holding the leader Lease and is the only writer of host bindings.
 *
 * Invariants (docs/architecture.md, "Binding"):
 * - The host's `spec.consumerRef` is the binding lock and the truth. It is
 *   only ever set on a host that has none, in a write that carries the
 *   resourceVersion the binder read, so two claims can never get one host,
 *   whatever the replicas, caches or crashes.
 * - Before binding, the chosen host is written on the claim's record (with
 *   the record's resourceVersion) together with the release finalizer: a
 *   claim has at most one chosen host, and a crash between the two writes
 *   leaves an intent the next leader completes or abandons.
 * - Decisions are taken from the shared caches, and every write carries the
 *   resourceVersion of the object the decision was taken from: kube-apiserver
 *   refuses it (409) unless the object is still exactly as judged, so a
 *   cache that lags can only cost a retry, never a wrong write. After a
 *   conflict the claim's record is read fresh from kube-apiserver. Where a
 *   cache's silence would end something for good (a binding, a release),
 *   the host is read fresh.
 * - Every step is idempotent and ends by requeueing, so any interruption is
 *   completed by whichever replica leads next.
 */
import { once } from 'node:events';
import type { ApiObject } from '../../api/rest/types.js';
import { EventRecorder, type EventType } from '../../backing/events.js';
import { withoutManagedFields, type ResourceEventHandler, type SharedInformer, type SharedInformerFactory } from '../../backing/shared-informers.js';
import { sameJson } from '../../backing/json.js';
import { isNotFound, KubeApiError, type KubeClient } from '../../backing/kube-client.js';
import type { Logger } from '../../observability/logger.js';
import { hostClaimRecord, hostErrorAnnotation } from '../../resources/hostclaim/storage.js';
import { hostKeys, metal3GroupVersion, metal3Paths, metal3Resources, provisioningState, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../metal3/types.js';
import { boundRecord } from '../../tenancy/host-references.js';
import { admits, allowsDetaching, tenantNamespace } from '../../tenancy/policy.js';
import { hostKey, isCandidate, type SelectionRequest } from '../../tenancy/selection.js';
import { WorkQueue, type ReconcileResult } from '../work-queue.js';
import { bindingAnnotations, claimOf, hasReleaseFinalizer, releaseFinalizer, releaseLabel, type Claim, type HostClaimStatus } from './claim.js';
import { HostChoice } from './host-choice.js';
import { bindingPatch, rebootHandled, withoutWorkload, withWorkload } from './host-spec.js';
import { consumerIndex, copyIndex, recordIndexes, unboundValue } from './indexes.js';
import { OwnWrites } from './own-writes.js';
import { copyOwnerLabel, deleteSecretCopies, syncSecretCopies, wantedCopyNames } from './secret-copies.js';
import { boundConditions, hostErrorText, nextStatus, unboundConditions, type ConditionInput, type UnboundReason } from './status.js';

export interface BinderOptions {
  readonly storageNamespace: string;
  readonly workers?: number;
}

/** States in which BMO has not yet started taking a workload off the host. */
const workloadStates = new Set(['provisioning', 'provisioned', 'externally provisioned']);
const orphanPrefix = 'orphan:';
/**
 * Binding is latency-bound (three sequential writes per new claim), so more
 * workers than client-go's usual 5–10; `reserved` keeps them off each
 * other's hosts. Well under the kube client's 64 sockets, which the request
 * path and the informers share.
 */
const defaultWorkers = 16;
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
interface Informers {
  readonly hosts: SharedInformer<BareMetalHost>;
  readonly policies: SharedInformer<HostDeployPolicy>;
  readonly namespaces: SharedInformer<Namespace>;
  readonly records: SharedInformer<ApiObject>;
  readonly secrets: SharedInformer<ApiObject>;
}

/** What the binder registered for one leadership term. */
interface Term {
  readonly informers: Informers;
  readonly choice: HostChoice;
  readonly removeHandlers: readonly (() => void)[];
}

export class Binder {
  private readonly recordsPath: string;
  private readonly events: EventRecorder;
  private readonly ownWrites = new OwnWrites();
  /** Records whose cached version one of our writes found stale (409): read fresh at their next reconcile. */
  private readonly staleRecords = new Set<string>();
  private informers: Informers | undefined;
  private choice: HostChoice | undefined;
  private removeHandlers: readonly (() => void)[] = [];
  private queue: WorkQueue | undefined;
  private requeueAllScheduled = false;

  constructor(
    private readonly client: KubeClient,
    private readonly caches: SharedInformerFactory,
    private readonly options: BinderOptions,
    private readonly logger: Logger,
  ) {
    this.recordsPath = `/apis/${hostClaimRecord.group}/${hostClaimRecord.version}/namespaces/${options.storageNamespace}/${hostClaimRecord.plural}`;
    this.events = new EventRecorder(client, 'hostclaim-binder', (error) => {
      logger.warn({ err: error }, 'cannot record an event');
    });
  }

  /** Runs until the signal aborts (leadership lost or shutdown). */
  async run(signal: AbortSignal): Promise<void> {
    const queue = new WorkQueue((key) => this.reconcile(key), { workers: this.options.workers ?? defaultWorkers }, (key, error) => {
      this.logger.warn({ err: error, key }, 'binder: reconcile failed; retrying');
    });
    const { informers, choice, removeHandlers } = this.register(queue);
    this.queue = queue;
    this.informers = informers;
    this.choice = choice;
    this.removeHandlers = removeHandlers;
    const stopped = once(signal, 'abort').then(() => this.halt());
    // Leadership lost or shutdown before the caches synced (kube-apiserver unreachable): nothing more to wait for.
    await Promise.race([Promise.all(allOf(informers).map((i) => i.waitForSync(signal))), stopped]);
    if (signal.aborted) return;
    this.logger.info('binder: caches synced, reconciling every claim');
    for (const record of informers.records.list()) queue.add(record.metadata.name ?? '');
    for (const host of informers.hosts.list()) this.checkOrphan(host);
    // No decision before every cache is synced: a claim must never be judged against a partial view of hosts or policies.
    queue.start();
  }

  private async halt(): Promise<void> {
    const { queue, choice, removeHandlers } = this;
    this.queue = undefined;
    this.informers = undefined;
    this.choice = undefined;
    this.removeHandlers = [];
    // The caches are the process's: the binder only stops listening to them.
    for (const remove of removeHandlers) remove();
    choice?.stop();
    await queue?.stop();
    this.ownWrites.clear();
    this.staleRecords.clear();
    this.logger.info('binder: stopped');
  }

  /**
   * Starts the caches the binder reads, on every replica that runs it, not
   * only on the leader: a replica that becomes leader starts from synced
   * caches (a shorter failover), and taking leadership does not add a
   * cluster-wide cache to the process's memory halfway through its life.
   */
  warmCaches(): void {
    this.sharedCaches();
  }

  /** The process's shared caches the binder reads (started when first asked for), with the records' indexes. */
  private sharedCaches(): Informers {
    const informers: Informers = {
      hosts: this.caches.informerFor<BareMetalHost>(metal3Resources.bareMetalHosts),
      policies: this.caches.informerFor<HostDeployPolicy>(metal3Resources.hostDeployPolicies),
      namespaces: this.caches.informerFor<Namespace>(metal3Resources.namespaces),
      records: this.caches.informerFor<ApiObject>({ path: this.recordsPath }),
      // Metadata only: which Secret changed, and which copies a claim has, is all the binder needs (it reads a referenced Secret fresh when it copies it).
      // Cluster-wide, because claims may live in any namespace a policy admits; one watch beats one per namespace.
      secrets: this.caches.informerFor<ApiObject>({ path: '/api/v1/secrets', representation: 'metadata', transform: withoutManagedFields }),
    };
    for (const index of Object.values(recordIndexes)) informers.records.addIndexer(index.name, index.fn);
    informers.secrets.addIndexer(copyIndex.name, copyIndex.fn);
    informers.hosts.addIndexer(consumerIndex.name, consumerIndex.fn);
    return informers;
  }

  /**
   * Takes the shared caches and registers this term's handlers. The
   * registration replays each cache's state as initial adds, which are
   * ignored: once every cache has synced, run() queues every claim anyway.
   */
  private register(queue: WorkQueue): Term {
    const informers = this.sharedCaches();
    // Before the binder's own host handler: a claim that a host event queues is judged on an index that has the event.
    const choice = new HostChoice(informers);
    const everyClaim = (): void => {
      this.requeueEveryClaim(queue);
    };
    const removeHandlers = [
      informers.hosts.addEventHandler(
        changes((host, deleted) => {
          this.onHostChange(queue, choice, host, deleted);
        }),
      ),
      informers.policies.addEventHandler(changes(everyClaim)),
      informers.namespaces.addEventHandler(changes(everyClaim)),
      informers.records.addEventHandler(
        changes((record, deleted) => {
          this.onRecordChange(queue, record, deleted);
        }),
      ),
      informers.secrets.addEventHandler(
        changes((secret, deleted) => {
          this.onSecretChange(queue, secret, deleted);
        }),
      ),
    ];
    return { informers, choice, removeHandlers };
  }

  /** Every claim, once per turn of the event loop however many policy or namespace events arrive (a relist brings many). */
  private requeueEveryClaim(queue: WorkQueue): void {
    if (this.requeueAllScheduled) return;
    this.requeueAllScheduled = true;
    queueMicrotask(() => {
      this.requeueAllScheduled = false;
      if (this.queue !== queue) return;
      for (const record of this.informers?.records.list() ?? []) queue.add(record.metadata.name ?? '');
    });
  }

  private onRecordChange(queue: WorkQueue, record: ApiObject, deleted: boolean): void {
    const name = record.metadata.name ?? '';
    if (deleted) this.ownWrites.forget(name);
    if (deleted || this.ownWrites.shouldQueue(name, 'record', record.metadata.resourceVersion)) queue.add(name);
  }

  /**
   * A host change concerns its own claim, the claims that chose it, and every
   * unbound claim when it may have become free or is kept for a node-reuse
   * pool (a claim waiting for it may have to fall back to another host).
   */
  private onHostChange(queue: WorkQueue, choice: HostChoice, host: BareMetalHost, deleted: boolean): void {
    const key = hostKey(host);
    const bound = boundRecord(host);
    choice.hostChanged(host);
    const concernsUnbound = (!deleted && isCandidate(host)) || hostKeys.nodeReuse in (host.metadata.labels ?? {});
    const records = this.informers?.records;
    if (records !== undefined) {
      const concerned = new Set([
        ...(bound === undefined ? [] : records.byIndex(recordIndexes.uid.name, bound.uid)),
        ...records.byIndex(recordIndexes.chosenHost.name, key),
        ...(concernsUnbound ? records.byIndex(recordIndexes.unbound.name, unboundValue) : []),
      ]);
      for (const record of concerned) {
        const claim = claimOf(record);
        if (claim !== undefined && this.ownWrites.shouldQueue(claim.identity.name, key, host.metadata.resourceVersion)) queue.add(claim.identity.name);
      }
    }
    if (!deleted) this.checkOrphan(host);
  }

  /**
   * A changed source Secret concerns the claims referencing it; a copy that
   * appears in the cache and is not wanted concerns its claim, which deletes
   * it (it may have been written just before the claim dropped the reference,
   * too late for that reconcile's cache).
   */
  private onSecretChange(queue: WorkQueue, secret: ApiObject, deleted: boolean): void {
    const records = this.informers?.records;
    if (records === undefined) return;
    const name = secret.metadata.name ?? '';
    for (const record of records.byIndex(recordIndexes.secrets.name, `${secret.metadata.namespace ?? ''}/${name}`)) queue.add(record.metadata.name ?? '');
    const owner = secret.metadata.labels?.[copyOwnerLabel];
    if (owner === undefined || deleted) return;
    for (const record of records.byIndex(recordIndexes.uid.name, owner)) {
      const claim = claimOf(record);
      if (claim !== undefined && !wantedCopyNames(claim).has(name)) queue.add(claim.identity.name);
    }
  }

  /** A host bound to a record that no longer exists (or was re-created) is given back. */
  private checkOrphan(host: BareMetalHost): void {
    const bound = boundRecord(host);
    if (bound?.namespace !== this.options.storageNamespace) return;
    const record = this.informers?.records.get(bound.namespace, bound.name);
    if (record?.metadata.uid !== bound.uid) this.queue?.add(`${orphanPrefix}${hostKey(host)}`);
  }

  private async reconcile(key: string): Promise<ReconcileResult> {
    if (key.startsWith(orphanPrefix)) return this.releaseOrphan(key.slice(orphanPrefix.length));
    this.ownWrites.begin(key);
    try {
      const result = await this.reconcileClaim(key);
      // A write found the cached record stale: look again (reading it fresh), even if this reconcile meant to stop here.
      return this.staleRecords.has(key) ? { requeueAfterMs: 0 } : result;
    } finally {
      // The queue runs a key added during its reconcile once more afterwards.
      if (this.ownWrites.end(key)) this.queue?.add(key);
    }
  }

  private async reconcileClaim(key: string): Promise<ReconcileResult> {
    const record = await this.currentRecord(key);
    const claim = record === undefined ? undefined : claimOf(record);
    if (claim === undefined) return undefined;
    if (claim.deleting) return this.release(claim);
    const host = await this.boundHost(claim);
    if (host !== undefined) return this.sync(claim, host);
    if (claim.ended !== undefined) return this.writeStatus(claim, unboundConditions(claim.ended as UnboundReason), {});
    if (claim.status.bareMetalHost !== undefined) return this.endBinding(claim);
    return this.bind(claim);
  }

  /**
   * The record from the shared cache (the event that queued the claim is in
   * it), or read fresh after a write found the cached version stale. Absent
   * from the cache: not created yet as far as this replica knows (its event
   * will queue it) or deleted.
   */
  private async currentRecord(key: string): Promise<ApiObject | undefined> {
    if (this.staleRecords.delete(key)) return this.getOrUndefined<ApiObject>(`${this.recordsPath}/${key}`);
    return this.requireInformers().records.get(this.options.storageNamespace, key);
  }

  // ---------------------------------------------------------------- binding

  private async bind(claim: Claim): Promise<ReconcileResult> {
    const choice = this.requireChoice();
    const request = choice.request(claim);
    const chosen = claim.chosenHost === undefined ? undefined : this.requireInformers().hosts.get(...splitKey(claim.chosenHost));
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
    const cached = this.requireInformers().hosts.get(...splitKey(keyOfHost));
    if (cached === undefined || !this.requireChoice().suitable(cached, request)) return undefined;
    try {
      return await this.patchHost(cached, bindingPatch(cached, claim), claim);
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    const fresh = await this.getOrUndefined<BareMetalHost>(metal3Paths.bareMetalHost(...splitKey(keyOfHost)));
    if (fresh === undefined || !this.requireChoice().suitable(fresh, request)) return undefined;
    // A second conflict is an error: the reconcile is retried with backoff, from the record's chosen host.
    return this.patchHost(fresh, bindingPatch(fresh, claim), claim);
  }

  /** Writes the chosen host and the release finalizer on the record; undefined if the record changed meanwhile. */
  private async recordIntent(claim: Claim, keyOfHost: string): Promise<Claim | undefined> {
    if (claim.chosenHost === keyOfHost && hasReleaseFinalizer(claim)) return claim;
    const record = structuredClone(claim.record);
    record.metadata.annotations = { ...record.metadata.annotations, [bindingAnnotations.host]: keyOfHost };
    record.metadata.finalizers = [...new Set([...(record.metadata.finalizers ?? []), releaseFinalizer])];
    const written = await this.writeRecord(record);
    return written === undefined ? undefined : claimOf(written);
  }

  private async forgetChoice(claim: Claim): Promise<ReconcileResult> {
    const record = structuredClone(claim.record);
    const annotations = { ...record.metadata.annotations };
    Reflect.deleteProperty(annotations, bindingAnnotations.host);
    record.metadata.annotations = annotations;
    await this.writeRecord(record);
    return { requeueAfterMs: 0 };
  }

  /** The host bound to this claim, read fresh: the chosen host if its consumerRef names this record. */
  private async boundHost(claim: Claim): Promise<BareMetalHost | undefined> {
    if (claim.chosenHost === undefined) return undefined;
    const host = await this.getOrUndefined<BareMetalHost>(metal3Paths.bareMetalHost(...splitKey(claim.chosenHost)));
    return host !== undefined && boundRecord(host)?.uid === claim.identity.uid ? host : undefined;
  }

  /** The claim was bound and its host is gone or no longer ours: the binding ends, it is not silently replaced. */
  private async endBinding(claim: Claim): Promise<ReconcileResult> {
    const chosen = claim.chosenHost;
    const exists = chosen !== undefined && (await this.getOrUndefined<BareMetalHost>(metal3Paths.bareMetalHost(...splitKey(chosen)))) !== undefined;
    const reason: UnboundReason = exists ? 'BindingEnded' : 'MissingBareMetalHost';
    const hostNamespace = chosen === undefined ? undefined : splitKey(chosen)[0];
    if (hostNamespace !== undefined) await deleteSecretCopies(this.client, claim.identity.uid, hostNamespace);
    const record = structuredClone(claim.record);
    record.metadata.annotations = { ...record.metadata.annotations, [bindingAnnotations.ended]: reason };
    const written = await this.writeRecord(record);
    if (written !== undefined) this.event(claim, 'Warning', reason, unboundConditions(reason)[0]?.message ?? '');
    return { requeueAfterMs: 0 };
  }

  // ------------------------------------------------------------ workload sync

  private async sync(claim: Claim, boundHost: BareMetalHost): Promise<ReconcileResult> {
    let host = boundHost;
    const informers = this.requireInformers();
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
        const written = await this.writeHost(desired, claim);
        this.workloadEvents(claim, host, desired);
        // kube-apiserver saw nothing to change: our idea of the host differs from its normal form. Go on rather than loop.
        if (written.metadata.resourceVersion === host.metadata.resourceVersion) this.logger.warn({ host: hostKey(host) }, 'binder: host write changed nothing');
        // The status goes on from the host as written, kube-apiserver's answer: as fresh as a read.
        host = written;
      }
    }
    if (!authorized && claim.status.conditions?.find((c) => c.type === 'Authorized')?.status !== 'False') {
      this.events.record(
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
    await this.writeRecord(record);
    return { requeueAfterMs: 0 };
  }

  private async clearReboot(claim: Claim): Promise<ReconcileResult> {
    const record = structuredClone(claim.record);
    const annotations = { ...record.metadata.annotations };
    Reflect.deleteProperty(annotations, hostKeys.reboot);
    record.metadata.annotations = annotations;
    if ((await this.writeRecord(record)) !== undefined) this.event(claim, 'Normal', 'Rebooted', 'The host rebooted as requested; the reboot annotation was cleared.');
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
    await this.writeRecord(record);
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
      current = await this.writeHost(stripped, claim);
      if (claim !== undefined) this.event(claim, 'Normal', 'Deprovisioning', 'Removing the workload from the host before releasing it.');
    }
    if (workloadStates.has(provisioningState(current))) return true;
    const next = structuredClone(current);
    Reflect.deleteProperty(next.spec, 'consumerRef');
    await this.writeHost(next, claim);
    return false;
  }

  private async releaseOrphan(keyOfHost: string): Promise<ReconcileResult> {
    const host = await this.getOrUndefined<BareMetalHost>(metal3Paths.bareMetalHost(...splitKey(keyOfHost)));
    const bound = host === undefined ? undefined : boundRecord(host);
    if (host === undefined || bound?.namespace !== this.options.storageNamespace) return undefined;
    const record = await this.getOrUndefined<ApiObject>(`${this.recordsPath}/${bound.name}`);
    if (record?.metadata.uid === bound.uid) return undefined;
    this.logger.info({ host: keyOfHost }, 'binder: releasing a host whose claim no longer exists');
    if (await this.deprovision(host, undefined)) return { requeueAfterMs: waitingRecheckMs };
    await deleteSecretCopies(this.client, bound.uid, host.metadata.namespace ?? '');
    return undefined;
  }

  // ------------------------------------------------------------------ writes

  private async writeStatus(claim: Claim, conditions: readonly ConditionInput[], binding: Pick<HostClaimStatus, 'bareMetalHost' | 'poweredOn'>): Promise<ReconcileResult> {
    const status = nextStatus(claim, conditions, binding, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    if (sameJson(status, claim.status)) return undefined;
    // Events only for a status that was written: a conflict is retried, and would announce the same change twice.
    if ((await this.writeRecord({ ...claim.record, status }, '/status')) !== undefined) this.transitionEvents(claim, status);
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

  /** PUT of a record (or its status); undefined when it changed or vanished since it was read (the record's next event requeues). */
  private async writeRecord(record: ApiObject, subresource: '' | '/status' = ''): Promise<ApiObject | undefined> {
    const name = record.metadata.name ?? '';
    try {
      const written = await this.client.request<ApiObject>('PUT', `${this.recordsPath}/${name}${subresource}`, { body: record });
      this.ownWrites.wrote(name, 'record', written.metadata.resourceVersion);
      return written;
    } catch (error) {
      if (isConflict(error)) this.staleRecords.add(name);
      if (isConflict(error) || isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** PUT of a host with the resourceVersion read: a conflict is an error, retried from fresh state. */
  private async writeHost(host: BareMetalHost, forClaim: Claim | undefined): Promise<BareMetalHost> {
    const written = await this.client.request<BareMetalHost>('PUT', metal3Paths.bareMetalHost(host.metadata.namespace ?? '', host.metadata.name), { body: host });
    if (forClaim !== undefined) this.ownWrites.wrote(forClaim.identity.name, hostKey(written), written.metadata.resourceVersion);
    return written;
  }

  /** A JSON merge patch of a host; the patch carries the resourceVersion it was computed from, kube-apiserver's precondition. */
  private async patchHost(host: BareMetalHost, patch: object, forClaim: Claim): Promise<BareMetalHost> {
    const written = await this.client.request<BareMetalHost>('PATCH', metal3Paths.bareMetalHost(host.metadata.namespace ?? '', host.metadata.name), {
      body: patch,
      contentType: 'application/merge-patch+json',
    });
    this.ownWrites.wrote(forClaim.identity.name, hostKey(written), written.metadata.resourceVersion);
    return written;
  }

  private async getOrUndefined<T>(path: string): Promise<T | undefined> {
    try {
      return await this.client.get<T>(path);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private event(claim: Claim, type: EventType, reason: string, message: string): void {
    this.events.record({ apiVersion: 'tenancy.metal3.io/v1alpha1', kind: 'HostClaim', namespace: claim.namespace, name: claim.name, uid: claim.uid }, type, reason, message);
  }

  private requireInformers(): Informers {
    if (this.informers === undefined) throw new Error('binder is not running');
    return this.informers;
  }

  private requireChoice(): HostChoice {
    if (this.choice === undefined) throw new Error('binder is not running');
    return this.choice;
  }
}

function allOf(informers: Informers): Pick<SharedInformer<ApiObject>, 'waitForSync'>[] {
  return [informers.hosts, informers.policies, informers.namespaces, informers.records, informers.secrets];
}

/** A handler for changes after registration: the replayed initial state is skipped (see Binder.register). */
function changes<T>(onChange: (object: T, deleted: boolean) => void): ResourceEventHandler<T> {
  return {
    onAdd: (object, isInInitialList) => {
      if (!isInInitialList) onChange(object, false);
    },
    onUpdate: (_, object) => {
      onChange(object, false);
    },
    onDelete: (object) => {
      onChange(object, true);
    },
  };
}

function isConflict(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 409;
}

function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
