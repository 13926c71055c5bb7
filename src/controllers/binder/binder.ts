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
import { EventRecorder } from '../../backing/events.js';
import { withoutManagedFields, type ResourceEventHandler, type SharedInformer, type SharedInformerFactory } from '../../backing/shared-informers.js';
import type { KubeClient } from '../../backing/kube-client.js';
import type { WorkQueueObserver } from '../../observability/controller-metrics.js';
import type { Logger } from '../../observability/logger.js';
import { hostClaimRecord } from '../../tenancy/claim-record.js';
import { metal3Resources, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../metal3/types.js';
import { boundRecord } from '../../tenancy/host-references.js';
import { hostKey } from '../../tenancy/selection.js';
import { WorkQueue, type ReconcileResult } from '../work-queue.js';
import { standaloneReplica, type WriteAcknowledgement } from '../../backing/replica-watermarks.js';
import { BinderWrites } from './binder-writes.js';
import { claimOf } from './claim.js';
import { HostChoice } from './host-choice.js';
import { consumerIndex, copyIndex, recordIndexes } from './indexes.js';
import { OwnWrites } from './own-writes.js';
import { ClaimReconciler, type BinderCaches } from './reconciler.js';
import { copyOwnerLabel, wantedCopyNames } from './secret-copies.js';

export interface BinderOptions {
  readonly storageNamespace: string;
  readonly workers?: number;
  /** Told of the work queue's adds, depth and reconciles (metrics). */
  readonly queueObserver?: WorkQueueObserver;
  /** The replica's watermarks, raised by every record write (default: none, for tests). */
  readonly acknowledgement?: WriteAcknowledgement;
}

const orphanPrefix = 'orphan:';
/**
 * Binding is latency-bound (three sequential writes per new claim), so more
 * workers than client-go's usual 5–10; `reserved` keeps them off each
 * other's hosts. Well under the kube client's 64 sockets, which the request
 * path and the informers share.
 */
const defaultWorkers = 16;
/** What the binder registered for one leadership term. */
interface Term {
  readonly informers: BinderCaches;
  readonly choice: HostChoice;
  readonly removeHandlers: readonly (() => void)[];
}

export class Binder {
  private readonly recordsPath: string;
  private readonly events: EventRecorder;
  private readonly ownWrites = new OwnWrites();
  private readonly writes: BinderWrites;
  private informers: BinderCaches | undefined;
  private choice: HostChoice | undefined;
  private reconciler: ClaimReconciler | undefined;
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
    this.writes = new BinderWrites(client, this.recordsPath, this.ownWrites, options.acknowledgement ?? standaloneReplica);
  }

  /** Runs until the signal aborts (leadership lost or shutdown). */
  async run(signal: AbortSignal): Promise<void> {
    const { workers = defaultWorkers, queueObserver } = this.options;
    const queue = new WorkQueue((key) => this.reconcile(key), { workers, ...(queueObserver === undefined ? {} : { observer: queueObserver }) }, (key, error) => {
      this.logger.warn({ err: error, key }, 'binder: reconcile failed; retrying');
    });
    const { informers, choice, removeHandlers } = this.register(queue);
    this.queue = queue;
    this.informers = informers;
    this.choice = choice;
    this.reconciler = new ClaimReconciler(
      { informers, choice },
      { client: this.client, writes: this.writes, events: this.events, logger: this.logger, storageNamespace: this.options.storageNamespace },
    );
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
    const { queue, choice, reconciler, removeHandlers } = this;
    this.queue = undefined;
    this.informers = undefined;
    this.choice = undefined;
    this.reconciler = undefined;
    this.removeHandlers = [];
    reconciler?.end();
    // The caches are the process's: the binder only stops listening to them.
    for (const remove of removeHandlers) remove();
    choice?.stop();
    await queue?.stop();
    this.ownWrites.clear();
    this.writes.clear();
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
  private sharedCaches(): BinderCaches {
    const informers: BinderCaches = {
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

  /** A host change concerns its own claim, the claims that chose it, and the unbound claims it may matter to (HostChoice.unboundConcerned). */
  private onHostChange(queue: WorkQueue, choice: HostChoice, host: BareMetalHost, deleted: boolean): void {
    const key = hostKey(host);
    const bound = boundRecord(host);
    choice.hostChanged(host);
    const records = this.informers?.records;
    if (records !== undefined) {
      const concerned = new Set([
        ...(bound === undefined ? [] : records.byIndex(recordIndexes.uid.name, bound.uid)),
        ...records.byIndex(recordIndexes.chosenHost.name, key),
        ...choice.unboundConcerned(host, deleted),
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
    const reconciler = this.reconciler;
    if (reconciler === undefined) throw new Error('binder is not running');
    if (key.startsWith(orphanPrefix)) return reconciler.releaseOrphan(key.slice(orphanPrefix.length));
    this.ownWrites.begin(key);
    try {
      const result = await reconciler.reconcileClaim(key);
      // A write found the cached record stale: look again (reading it fresh), even if this reconcile meant to stop here.
      return this.writes.isStale(key) ? { requeueAfterMs: 0 } : result;
    } finally {
      // The queue runs a key added during its reconcile once more afterwards.
      if (this.ownWrites.end(key)) this.queue?.add(key);
    }
  }
}

function allOf(informers: BinderCaches): Pick<SharedInformer<ApiObject>, 'waitForSync'>[] {
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
