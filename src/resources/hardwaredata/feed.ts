/**
 * The live HardwareData state: the process's shared caches of
 * BareMetalHosts, HostDeployPolicies and Namespaces, plus the HostClaim hub
 * (fed by the shared cache of records), update the
 * model (model.ts) in etcd revision order (input-merge.ts), and each change
 * publishes into the derived HardwareData WatchHub the ADDED, MODIFIED and
 * DELETED events of the (tenant namespace, host) pairs it changed. The hub
 * stores no object: it asks the model.
 *
 * resourceVersions (the same on every replica):
 *  - an object's is the newest revision among its inputs (stateRevision);
 *  - a change's position in the history is the revision of the input change
 *    that caused it; one input change may change many objects, so changes
 *    share positions and a watch resumed from X replays the changes at X
 *    again (a harmless repeat) — never misses one. A DELETED carries its
 *    position (the revision of the deletion or of the access lost);
 *  - a relist of an input is a discontinuity: the history restarts at the
 *    newest revision known, older resumes get 410 and relist.
 *
 * A change touching more (namespace, host) pairs than a tenth of the
 * history holds is generated only for namespaces someone watches; for the
 * others the history records a gap (410 for a watch resuming across it).
 * Their events would soon be evicted unread: a few such changes fill the
 * history, and at 1,000 tenant namespaces admitted to a host, binding it
 * would compute 2,000 objects (each tenant's before and after) that nobody
 * reads.
 */
import { followHub } from '../../api/rest/hub-follower.js';
import { revision, type ApiObject, type ObjectEvent } from '../../api/rest/types.js';
import type { WatchHub } from '../../api/rest/watch-hub.js';
import { ApiError } from '../../api/status.js';
import { ConsistentReadFence, type FencedCache, type Freshness, type ProbeScope } from '../../backing/consistent-read.js';
import { dependencyFailure } from '../../backing/errors.js';
import type { KubeObject } from '../../backing/informer.js';
import type { KubeClient } from '../../backing/kube-client.js';
import type { ProbeMethod } from '../../backing/scope-probe.js';
import type { BackingResource, SharedInformer, SharedInformerFactory } from '../../backing/shared-informers.js';
import { metal3Resources, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../metal3/types.js';
import { policyKey } from '../../tenancy/visibility.js';
import { sameJson } from '../../backing/json.js';
import { InputMerge } from './input-merge.js';
import { hostKey, type HardwareDataModel, type TenantContext } from './model.js';
import { readObject, type ObjectInputs, type ScopedRead } from './object-read.js';
import { claimNamespacesOf, type ClaimNamespaces } from './projection.js';
import { unobservedFences, type FenceObservers } from '../../observability/consistent-read-metrics.js';

/** Where the HostClaims come from: their hub, fed by the shared cache of their records. */
export interface ClaimSource {
  readonly hub: WatchHub;
  /** The records' shared cache (asked for from the factory once the hub has synced). */
  readonly resource: BackingResource;
  /** How a fence probes the records (the REST layer's reads probe them the same way). */
  readonly probe: ProbeMethod;
}

/** What the feed needs of an input's shared cache to fence it. */
type InputCache = FencedCache & { isAbsent(): boolean; list(): readonly KubeObject[] };

type Input = 'hosts' | 'policies' | 'namespaces' | 'claims';
const inputs: readonly Input[] = ['hosts', 'policies', 'namespaces', 'claims'];

/** A change waiting on a quiet input for this long proves that input current (fence). */
const prodDelayMs = 100;
const prodRetryMs = 1000;
/** A change is generated for unwatched namespaces too only while it fills at most 1/this of the history. */
const unwatchedHistoryShare = 10;

export class HardwareDataFeed {
  private readonly hosts: SharedInformer<BareMetalHost>;
  private readonly policies: SharedInformer<HostDeployPolicy>;
  private readonly namespaces: SharedInformer<Namespace>;
  private readonly merge: InputMerge;
  private readonly fences: Partial<Record<Input, ConsistentReadFence>> = {};
  private readonly synced = new Set<Input>();
  private removeHandlers: (() => void)[] = [];
  private stopFollowingClaims: (() => void) | undefined;
  /** The newest revision any input was listed at: where the history restarts. */
  private newestListed = 0n;

  constructor(
    private readonly client: KubeClient,
    private readonly informers: SharedInformerFactory,
    readonly hub: WatchHub,
    readonly model: HardwareDataModel,
    private readonly claims: ClaimSource,
    private readonly fenceObservers: FenceObservers = () => unobservedFences,
  ) {
    this.merge = new InputMerge({
      position: (rv) => positionAfter(rv, revision(hub.currentResourceVersion())),
      onProgress: (rv) => {
        if (hub.hasSynced() && rv > 0n) hub.progress(rv.toString());
      },
      prod: (input) => {
        this.prod(input as Input);
      },
      prodDelayMs,
    });
    for (const input of inputs) this.merge.addInput(input, input === 'claims' ? () => revision(claims.hub.currentResourceVersion()) : undefined);
    this.hosts = informers.informerFor<BareMetalHost>(metal3Resources.bareMetalHosts);
    this.policies = informers.informerFor<HostDeployPolicy>(metal3Resources.hostDeployPolicies);
    this.namespaces = informers.informerFor<Namespace>(metal3Resources.namespaces);
  }

  start(): void {
    const { model } = this;
    this.removeHandlers = [
      this.hosts.addEventHandler(
        this.handlers<BareMetalHost>('hosts', (hosts) => {
          model.replaceHosts(hosts);
        }, (event, position) => {
          this.hostChanged(event, position);
        }),
      ),
      this.policies.addEventHandler(
        this.handlers<HostDeployPolicy>('policies', (policies) => {
          model.visibility.replacePolicies(policies);
        }, (event, position) => {
          this.policyChanged(event, position);
        }),
      ),
      this.namespaces.addEventHandler(
        this.handlers<Namespace>('namespaces', (namespaces) => {
          model.visibility.replaceNamespaces(namespaces);
        }, (event, position) => {
          this.namespaceChanged(event, position);
        }),
      ),
    ];
    this.stopFollowingClaims = followHub(this.claims.hub, {
      onResync: (claims, rv) => {
        this.relisted('claims', revision(rv), false, () => {
          this.model.replaceClaims(claimNamespacesOf(claims));
        });
      },
      onEvent: (event) => {
        if (this.changesNothing(event)) return;
        this.merge.enqueue('claims', revision(event.object.metadata.resourceVersion), (position) => {
          this.claimChanged(event, position);
        });
      },
    });
  }

  stop(): void {
    this.stopFollowingClaims?.();
    for (const remove of this.removeHandlers.splice(0)) remove();
    this.merge.stop();
  }

  /**
   * Resolves once the model reflects every write acknowledged before the
   * call: each input's shared cache is fenced (backing/consistent-read.ts,
   * probes coalesced across requests), then the merge applies everything up
   * to the oldest fence. An input that is not served holds nothing up;
   * one whose cache cannot catch up makes the read a 504 with Retry-After,
   * as kube's watch cache answers a consistent read it cannot serve in time.
   */
  async consistent(): Promise<void> {
    if (!this.hub.hasSynced()) {
      await this.hub.waitForResourceVersion('1'); // the hub's own 429 while initializing
    }
    const revisions = await Promise.all(inputs.map((input) => this.fenceOf(input)));
    inputs.forEach((input, i) => {
      const rv = revisions[i];
      if (rv !== undefined) this.merge.advance(input, rv);
    });
    await this.hub.waitForResourceVersion(minimum(revisions).toString());
  }

  /**
   * A consistent GET of one object, fenced by its own inputs only
   * (object-read.ts); undefined: ask consistent() and the model instead.
   */
  async consistentObject(namespace: string, name: string): Promise<ScopedRead> {
    if (!this.hub.hasSynced() || this.synced.size < inputs.length) return undefined;
    return readObject(this.objectInputs(), namespace, name);
  }

  private objectInputs(): ObjectInputs {
    const records = this.informers.informerFor<ApiObject>(this.claims.resource);
    return {
      model: this.model,
      host: (namespace, name) => this.hosts.get(namespace, name),
      namespace: (name) => this.namespaces.get(undefined, name),
      policiesIn: (namespace) => this.policies.list().filter((policy) => policy.metadata.namespace === namespace),
      record: (reference) => records.get(reference.namespace, reference.name),
      hasClaim: (namespace, name, uid) => this.claims.hub.get(namespace, name)?.metadata.uid === uid,
      fence: (input, scope) => this.fenceScope(input, scope),
    };
  }

  // ---- inputs ---------------------------------------------------------------

  private handlers<T extends KubeObject>(input: Input, replace: (objects: readonly T[]) => void, change: (event: ObjectEvent, position: bigint) => void) {
    const enqueue = (type: ObjectEvent['type'], object: T): void => {
      const apiObject = object as unknown as ApiObject;
      this.merge.enqueue(input, revision(apiObject.metadata.resourceVersion), (position) => {
        change({ type, object: apiObject }, position);
      });
    };
    return {
      // A (re)list, or '' when the resource is not served.
      onReplace: (objects: readonly T[], rv: string) => {
        this.relisted(input, revision(rv), rv === '', () => {
          replace(objects);
        });
      },
      onAdd: (object: T) => {
        enqueue('ADDED', object);
      },
      onUpdate: (_: T, object: T) => {
        enqueue('MODIFIED', object);
      },
      onDelete: (object: T) => {
        enqueue('DELETED', object);
      },
      onProgress: (rv: string) => {
        this.merge.advance(input, revision(rv));
      },
    };
  }

  /** A relist (or absence): the new state replaces the old; a discontinuity in the history. */
  private relisted(input: Input, rv: bigint, absent: boolean, replace: () => void): void {
    replace();
    this.synced.add(input);
    if (rv > this.newestListed) this.newestListed = rv;
    this.merge.relist(input, rv < 0n ? 0n : rv, absent);
    if (this.synced.size < inputs.length) return;
    // Past the current position when already serving: watchers there have not seen what the relist folded in.
    const current = revision(this.hub.currentResourceVersion());
    const restartAt = this.hub.hasSynced() ? maxOf(this.newestListed, current + 1n) : this.newestListed;
    if (restartAt > 0n) this.hub.restart(restartAt.toString());
  }

  /** The input's cache proven current: a revision it has delivered everything up to (undefined: not served). */
  private async fenceOf(input: Input): Promise<bigint | undefined> {
    const cache = this.cacheOf(input);
    if (cache.isAbsent()) return undefined;
    const freshness = await this.fence(input, cache, { key: 'all', cached: () => cache.list() });
    if (!freshness.fresh) throw notCurrent(cache.resource.path);
    return revision(freshness.resourceVersion);
  }

  /** One scope of the input proven current (false: not served, or not current in time). */
  private async fenceScope(input: Input, scope: ProbeScope): Promise<boolean> {
    const cache = this.cacheOf(input);
    return !cache.isAbsent() && (await this.fence(input, cache, scope)).fresh;
  }

  /** The input's fence (one per input: probes of a scope are coalesced across requests). */
  private fence(input: Input, cache: InputCache, scope: ProbeScope): Promise<Freshness> {
    this.fences[input] ??= new ConsistentReadFence(this.client, cache, {
      probe: input === 'claims' ? this.claims.probe : { kind: 'metadata' },
      observer: this.fenceObservers(cache.resource.path),
    });
    return this.fences[input].fence(scope).catch((error: unknown) => {
      throw dependencyFailure(error, 'storage') ?? error;
    });
  }

  private cacheOf(input: Input): InputCache {
    switch (input) {
      case 'hosts':
        return this.hosts;
      case 'policies':
        return this.policies;
      case 'namespaces':
        return this.namespaces;
      case 'claims':
        // The records' cache feeds the claim hub synchronously, so the hub has what the cache has.
        return this.informers.informerFor(this.claims.resource);
    }
  }

  private prod(input: Input): void {
    // An input not listed yet has nothing to prove (and the records' cache may not exist before its CRD).
    if (!this.synced.has(input)) return;
    this.fenceOf(input).then(
      (rv) => {
        if (rv !== undefined) this.merge.advance(input, rv);
      },
      () => {
        setTimeout(() => {
          this.merge.drain();
        }, prodRetryMs).unref();
      },
    );
  }

  // ---- changes ------------------------------------------------------------

  private hostChanged(event: ObjectEvent, position: bigint): void {
    const host = event.object as unknown as BareMetalHost;
    const key = hostKey(host);
    const next = event.type === 'DELETED' ? undefined : host;
    const previous = this.model.setHost(key, next);
    if (!this.hub.hasSynced()) return;
    const tenants = new Set<string>([...(previous === undefined ? [] : this.model.tenantsOf(previous)), ...(next === undefined ? [] : this.model.tenantsOf(next))]);
    this.publishChanges(position, tenants, tenants.size, (namespace) => {
      const context = this.model.context(namespace);
      return [[previous === undefined ? undefined : this.model.object(previous, context), next === undefined ? undefined : this.model.object(next, context)]];
    });
  }

  private policyChanged(event: ObjectEvent, position: bigint): void {
    const policy = event.object as unknown as HostDeployPolicy;
    const hostNamespace = policy.metadata.namespace ?? '';
    const before = new Map<string, TenantContext>();
    for (const namespace of this.model.visibility.sortedNamespaces()) before.set(namespace, this.model.context(namespace));
    const changed = this.model.visibility.setPolicy(policyKey(policy), event.type === 'DELETED' ? undefined : policy);
    if (!this.hub.hasSynced()) return;
    const hosts = this.model.hostsIn(hostNamespace);
    this.publishChanges(position, changed, changed.size * hosts.length, (namespace) => {
      const old = before.get(namespace) ?? this.model.context(namespace);
      const now = this.model.context(namespace);
      return hosts.map((host) => [this.model.object(host, old), this.model.object(host, now)] as const);
    });
  }

  private namespaceChanged(event: ObjectEvent, position: bigint): void {
    const namespace = event.object as unknown as Namespace;
    const name = namespace.metadata.name;
    const old = this.model.context(name);
    this.model.visibility.setNamespace(name, event.type === 'DELETED' ? undefined : namespace);
    if (!this.hub.hasSynced()) return;
    const now = this.model.context(name);
    const hosts = new Set([...this.model.candidates(old), ...this.model.candidates(now)]);
    this.publishChanges(position, [name], hosts.size, () => [...hosts].map((host) => [this.model.object(host, old), this.model.object(host, now)] as const));
  }

  /**
   * A claim's uid and namespace, all HardwareData reads of it, never change:
   * a MODIFIED of a claim the model knows (a label, the binder's status)
   * shows nowhere. It is not queued, since a queued change waits for every
   * quiet input to be proven current: a probe of every host per claim write.
   * The claims input's watermark still advances (the hub's own).
   */
  private changesNothing(event: ObjectEvent): boolean {
    const { uid, namespace } = event.object.metadata;
    return event.type === 'MODIFIED' && uid !== undefined && namespace !== undefined && this.model.claimNamespace(uid) === namespace;
  }

  private claimChanged(event: ObjectEvent, position: bigint): void {
    const { uid, namespace } = event.object.metadata;
    if (uid === undefined) return;
    const next = event.type === 'DELETED' ? undefined : namespace;
    const previous = this.model.setClaim(uid, next);
    if (previous === next || !this.hub.hasSynced()) return;
    const before: ClaimNamespaces = { get: (claim) => (claim === uid ? previous : this.model.claimNamespace(claim)) };
    const hosts = this.model.hostsBoundTo(uid);
    const tenants = [previous, next].filter((n) => n !== undefined);
    this.publishChanges(position, tenants, hosts.length * tenants.length, (tenant) => {
      const context = this.model.context(tenant);
      return hosts.map((host) => [this.model.object(host, context, before), this.model.object(host, context)] as const);
    });
  }

  /**
   * Publishes what changed in each namespace at `position`. `estimate`
   * bounds the number of pairs: beyond a tenth of the history's capacity only
   * watched namespaces get events, the others a gap (see the module comment).
   */
  private publishChanges(
    position: bigint,
    namespaces: Iterable<string>,
    estimate: number,
    pairs: (namespace: string) => Iterable<readonly [ApiObject | undefined, ApiObject | undefined]>,
  ): void {
    const everything = estimate <= this.hub.historyCapacity() / unwatchedHistoryShare;
    const skipped = new Set<string>();
    const resourceVersion = position.toString();
    for (const namespace of namespaces) {
      if (!everything && !this.hub.watched(namespace)) {
        skipped.add(namespace);
        continue;
      }
      for (const [previous, next] of pairs(namespace)) {
        const event = changeEvent(previous, next, resourceVersion);
        if (event !== undefined) this.hub.publish(event, { resourceVersion, prev: previous });
      }
    }
    if (skipped.size > 0) this.hub.gap(resourceVersion, skipped);
  }
}

/** ADDED, MODIFIED (content or resourceVersion differ) or DELETED (at the change's position), or nothing. */
function changeEvent(previous: ApiObject | undefined, next: ApiObject | undefined, position: string): ObjectEvent | undefined {
  if (next !== undefined) {
    if (previous === undefined) return { type: 'ADDED', object: next };
    // A new resourceVersion is a new object: the content comparison (a JSON round trip of both) only when it is the same.
    if (previous.metadata.resourceVersion !== next.metadata.resourceVersion) return { type: 'MODIFIED', object: next };
    return sameJson(previous, next) ? undefined : { type: 'MODIFIED', object: next };
  }
  if (previous === undefined) return undefined;
  return { type: 'DELETED', object: { ...previous, metadata: { ...previous.metadata, resourceVersion: position } } };
}

function minimum(revisions: readonly (bigint | undefined)[]): bigint {
  const known = revisions.filter((rv) => rv !== undefined);
  return known.length === 0 ? 0n : known.reduce((a, b) => (a < b ? a : b));
}

/** A consistent read that cannot be served in time: kube's answer, and the client retries. */
function notCurrent(path: string): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: the cache of ${path.split('/').at(-1) ?? path} is not current; retry`, { retryAfterSeconds: 1 });
}

/**
 * Where a change goes in the hub: its revision, or just past the hub's
 * current position when a relist already moved the hub there (a restart at
 * a newer list, or one past the current position). Never *at* the current
 * position: a watcher started there has seen that state, so a change
 * published at it would never reach that watcher.
 */
function positionAfter(rv: bigint, current: bigint): bigint {
  return rv > current ? rv : current + 1n;
}

function maxOf(...values: bigint[]): bigint {
  return values.reduce((a, b) => (a > b ? a : b));
}
