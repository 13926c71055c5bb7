/**
 * The consistent-read fence: when may a read with resourceVersion unset be
 * answered from a shared cache? kube-apiserver serves such reads from its
 * watch cache once the cache has reached etcd's current revision
 * (KEP-2340; k8s.io/apiserver pkg/storage/cacher: `waitUntilFreshLocked`),
 * learning that revision from etcd and prodding quiet caches with etcd's
 * progress notifications. A client of kube-apiserver gets no progress
 * notifications: an informer of a quiet resource only learns the current
 * revision from bookmarks about once a minute, and the cluster's revision
 * moves with every Lease renewal anywhere. So freshness is established per
 * scope instead:
 *
 * 1. Probe: a consistent (resourceVersion unset) LIST of exactly the scope
 *    (a namespace, a label selector, one object by `metadata.name`), of
 *    each object's name and resourceVersion only (scope-probe.ts: metadata,
 *    or a Table for a CRD of ours). Its resourceVersion X is at least the
 *    revision of every write acknowledged before the probe started.
 * 2. Wait until the cache agrees with it: the cache has reached X, or every
 *    probed object is cached at a resourceVersion at least the probed one
 *    and every cached object of the scope missing from the probe is newer
 *    than X. The events that would make a lagging cache agree are already on
 *    their way (they are older than X), so the wait ends; it is bounded all
 *    the same (`waitMs`), and a cache that cannot catch up (its watch is
 *    broken) makes the caller read from kube-apiserver instead.
 * 3. The answer is the cache's state of the scope at resourceVersion
 *    max(X, cache's resourceVersion). Either the cache has reached X, and
 *    its state is the truth at its own, newer resourceVersion; or it is below
 *    X and agrees, which (every cached version being older than X) means it
 *    holds exactly the scope's objects at X, so the state is the truth at X
 *    and a watch from X misses nothing of the scope.
 *
 * Coalescing: requests for the same scope share probes, but a request may
 * only be served by a probe that started after it arrived (an earlier one
 * could predate a write acknowledged before the request). At most one probe
 * per scope is in flight; requests arriving meanwhile share the next one,
 * which starts when the current one ends. Under load the probes per request
 * tend to zero. A request waits for its probe (the one in flight, then
 * its own) at most one kube-apiserver call's bound (`probeWaitMs`), then
 * fails as a call that got no answer: with etcd unreachable, the probe in
 * flight and the next would otherwise hold a request for two bounds, past
 * kube's request timeout.
 *
 * Batching: scopes one probe can cover together (a ScopeBatch: namespaces,
 * whose union is a label `in`) share probes across members too. While a
 * batch's probe is in flight, the members asked for meanwhile wait, and the
 * next probe covers all of them; each waits for the cache to agree with the
 * probe on the whole union. A probe of a namespace costs kube-apiserver a
 * pass over every record of the storage namespace whatever it returns, so
 * one probe for several namespaces costs about what one for one does.
 */
import { revision } from '../api/rest/types.js';
import { unobservedFences, type FenceObserver } from '../observability/consistent-read-metrics.js';
import type { KubeObject } from './informer.js';
import { KubeUnavailableError, kubeCallTimeoutMs } from './kube-client.js';
import { ScopeProber, type ProbeClient, type ProbeMethod, type ProbeResult } from './scope-probe.js';
import { objectKey } from './shared-informers.js';

/** What a fence needs of a shared cache (a SharedInformer). */
export interface FencedCache {
  readonly resource: { readonly path: string };
  isHealthy(): boolean;
  lastSyncResourceVersion(): string;
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  addChangeListener(listener: () => void): () => void;
}

/** One scope of a read: what the probe lists, and the cached objects it covers. */
export interface ProbeScope {
  /** Requests with the same key share probes; it must identify the selectors below. */
  readonly key: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** The cached objects the probe's selectors select. */
  cached(): Iterable<KubeObject>;
}

/** Scopes one probe can cover together: the union of any members (at most maxMembers) is a scope. */
export interface ScopeBatch {
  /** Requests with the same key share the batch's probes. */
  readonly key: string;
  readonly maxMembers: number;
  scopeOf(members: readonly string[]): ProbeScope;
}

export type Freshness =
  /** The cache may answer; resourceVersion is the answer's list resourceVersion. */
  | { readonly fresh: true; readonly resourceVersion: string }
  /** Read from kube-apiserver instead. */
  | { readonly fresh: false; readonly reason: 'unhealthy' | 'timeout' };

/** A probe and the scope it covered. */
interface ScopeProbe {
  readonly scope: ProbeScope;
  readonly probe: ProbeResult;
}

const defaultWaitMs = 3_000;

export class ConsistentReadFence {
  /** fence()'s probes, by scope key: each a batch of one member. */
  private readonly scopes = new BatchCoalescer<ScopeProbe>();
  /** fenceMember()'s probes, by batch key. */
  private readonly batches = new BatchCoalescer<ScopeProbe>();
  private readonly waitMs: number;
  private readonly probeWaitMs: number;
  private readonly prober: ScopeProber;
  private readonly observer: FenceObserver;

  constructor(
    client: ProbeClient,
    private readonly cache: FencedCache,
    options: { readonly waitMs?: number; readonly probeWaitMs?: number; readonly probe?: ProbeMethod; readonly observer?: FenceObserver } = {},
  ) {
    this.waitMs = options.waitMs ?? defaultWaitMs;
    this.probeWaitMs = options.probeWaitMs ?? kubeCallTimeoutMs;
    this.prober = new ScopeProber(client, options.probe ?? { kind: 'metadata' });
    this.observer = options.observer ?? unobservedFences;
  }

  /** Probes kube-apiserver (coalesced) and waits for the cache to agree; rejects with the probe's error. */
  async fence(scope: ProbeScope, signal?: AbortSignal): Promise<Freshness> {
    return this.fenceIn(this.scopes, { key: scope.key, maxMembers: 1, scopeOf: () => scope }, '', signal);
  }

  /** Like fence(), for one member of a batch: probed with whichever other members are waiting (ScopeBatch). */
  fenceMember(batch: ScopeBatch, member: string, signal?: AbortSignal): Promise<Freshness> {
    return this.fenceIn(this.batches, batch, member, signal);
  }

  private async fenceIn(coalescer: BatchCoalescer<ScopeProbe>, batch: ScopeBatch, member: string, signal: AbortSignal | undefined): Promise<Freshness> {
    if (!this.cache.isHealthy()) return this.reported({ fresh: false, reason: 'unhealthy' });
    const probed = coalescer.run(batch.key, member, batch.maxMembers, async (members) => {
      const union = batch.scopeOf(members);
      this.observer.probeSent();
      const probe = await this.prober.probe({ path: this.cache.resource.path, labelSelector: union.labelSelector, fieldSelector: union.fieldSelector });
      return { scope: union, probe };
    });
    try {
      const { scope, probe } = await withinBound(probed, this.probeWaitMs);
      return this.reported(await this.waitForAgreement(scope, probe, signal));
    } catch (error) {
      // A client that went away ended nothing of the fence's.
      if (signal?.aborted !== true) this.observer.fenced('error');
      throw error;
    }
  }

  private reported(freshness: Freshness): Freshness {
    this.observer.fenced(freshness.fresh ? 'fresh' : freshness.reason);
    return freshness;
  }

  /** How many probes were sent (for tests and metrics). */
  probesSent(): number {
    return this.scopes.started + this.batches.started;
  }

  /**
   * Fresh once the cache has reached `target` (a revision every write that
   * must be seen is at or below: replica-watermarks.ts), with no probe.
   */
  async fenceAt(target: bigint, signal?: AbortSignal): Promise<Freshness> {
    if (!this.cache.isHealthy()) return this.reported({ fresh: false, reason: 'unhealthy' });
    const reached = (): string | undefined => {
      const resourceVersion = this.cache.lastSyncResourceVersion();
      return revision(resourceVersion) >= target ? resourceVersion : undefined;
    };
    return this.reported(await this.waitUntil(reached, signal));
  }

  private waitForAgreement(scope: ProbeScope, probe: ProbeResult, signal: AbortSignal | undefined): Promise<Freshness> {
    return this.waitUntil(() => (agrees(this.cache, scope, probe) ? maxRevision(probe.resourceVersion, this.cache.lastSyncResourceVersion()) : undefined), signal);
  }

  /** Waits (at most waitMs) until `freshAt` names the answer's resourceVersion, or the cache turns unhealthy. */
  private waitUntil(freshAt: () => string | undefined, signal: AbortSignal | undefined): Promise<Freshness> {
    const check = (): Freshness | undefined => {
      const resourceVersion = freshAt();
      if (resourceVersion !== undefined) return { fresh: true, resourceVersion };
      if (!this.cache.isHealthy()) return { fresh: false, reason: 'unhealthy' };
      return undefined;
    };
    const now = check();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        removeListener();
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        finish();
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const removeListener = this.cache.addChangeListener(() => {
        const outcome = check();
        if (outcome === undefined) return;
        finish();
        resolve(outcome);
      });
      const timer = setTimeout(() => {
        finish();
        resolve({ fresh: false, reason: 'timeout' });
      }, this.waitMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The probe, or a timeout as kube-client's when it does not come within boundMs (the probe goes on for the others). */
function withinBound<R>(probe: Promise<R>, boundMs: number): Promise<R> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new KubeUnavailableError(true, { cause: new Error(`no probe answer within ${boundMs} ms`) }));
    }, boundMs);
    timer.unref();
  });
  return Promise.race([probe, expired]).finally(() => {
    clearTimeout(timer);
  });
}

/** The agreement rule of the module comment. */
export function agrees(cache: Pick<FencedCache, 'get' | 'lastSyncResourceVersion'>, scope: ProbeScope, probe: ProbeResult): boolean {
  if (revision(cache.lastSyncResourceVersion()) >= probe.resourceVersion) return true;
  for (const [key, probed] of probe.items) {
    const slash = key.indexOf('/');
    const cached = cache.get(key.slice(0, slash), key.slice(slash + 1));
    if (cached === undefined || revision(cached.metadata.resourceVersion) < probed) return false;
  }
  for (const cached of scope.cached()) {
    const key = objectKey(cached.metadata.namespace, cached.metadata.name);
    if (!probe.items.has(key) && revision(cached.metadata.resourceVersion) <= probe.resourceVersion) return false;
  }
  return true;
}

function maxRevision(probed: bigint, cached: string): string {
  const cachedRevision = revision(cached);
  return (cachedRevision > probed ? cachedRevision : probed).toString();
}

interface Deferred<R> {
  readonly promise: Promise<R>;
  readonly resolve: (value: R) => void;
  readonly reject: (reason: unknown) => void;
}

function deferred<R>(): Deferred<R> {
  let resolve: (value: R) => void = () => undefined;
  let reject: (reason: unknown) => void = () => undefined;
  const promise = new Promise<R>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface Batch<R> {
  inFlight: boolean;
  /** Members asked for since the probe in flight started, each with its waiters' promise. */
  readonly waiting: Map<string, Deferred<R>>;
}

/**
 * At most one call in flight per key; members asked for meanwhile share the
 * next call, which covers up to `maxMembers` of them and starts when the
 * current one ends. A member is never served by a call that started before
 * it was asked for.
 */
export class BatchCoalescer<R> {
  private readonly batches = new Map<string, Batch<R>>();
  started = 0;

  run(key: string, member: string, maxMembers: number, call: (members: readonly string[]) => Promise<R>): Promise<R> {
    let batch = this.batches.get(key);
    if (batch === undefined) {
      batch = { inFlight: false, waiting: new Map() };
      this.batches.set(key, batch);
    }
    let waiter = batch.waiting.get(member);
    if (waiter === undefined) {
      waiter = deferred<R>();
      batch.waiting.set(member, waiter);
    }
    if (!batch.inFlight) this.launch(key, batch, maxMembers, call);
    return waiter.promise;
  }

  private launch(key: string, batch: Batch<R>, maxMembers: number, call: (members: readonly string[]) => Promise<R>): void {
    const taken = [...batch.waiting].slice(0, Math.max(1, maxMembers));
    for (const [member] of taken) batch.waiting.delete(member);
    batch.inFlight = true;
    this.started++;
    const running = call(taken.map(([member]) => member));
    running.then(
      (result) => {
        for (const [, waiter] of taken) waiter.resolve(result);
      },
      (error: unknown) => {
        for (const [, waiter] of taken) waiter.reject(error);
      },
    );
    const next = (): void => {
      batch.inFlight = false;
      if (batch.waiting.size > 0) this.launch(key, batch, maxMembers, call);
      else this.batches.delete(key);
    };
    running.then(next, next);
  }
}
