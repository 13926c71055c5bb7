/**
 * Proves that an informer's cache is current: a metadata-only LIST of the
 * resource without resourceVersion is a consistent read (kube-apiserver
 * answers at a revision X at least as new as the request); when the cache
 * holds exactly the listed objects at the listed resourceVersions (each
 * resourceVersion is one write of one object), or the informer has already
 * seen an event at or after X, the informer has delivered everything up to
 * X. A quiet resource's informer never advances by itself (bookmarks come
 * about once a minute), so this is how its watermark catches up with the
 * rest (the reference's §2, "learning kube-apiserver's revision"; KEP-2340
 * serves consistent reads from the watch cache the same way, with etcd's
 * progress notifications instead of a list).
 *
 * Coalesced as kube's progress requester is: one check in flight and one
 * queued; a caller reuses only a check that started after it asked (an
 * earlier one could predate a write acknowledged before the caller began).
 */
import { ApiError } from '../../api/status.js';
import { revision, type ApiObject } from '../../api/rest/types.js';
import type { KubeClient } from '../../backing/kube-client.js';
import { isNotServed } from '../../backing/optional-informer.js';

interface MetadataList {
  readonly metadata: { readonly resourceVersion?: string };
  readonly items: readonly ApiObject[] | null;
}

export interface FenceSource {
  /** Collection path (all namespaces, or the storage namespace). */
  readonly path: string;
  readonly labelSelector?: string;
  /** Whether a listed object is one the cache holds (records that are not claims' are not). */
  readonly counts?: (item: ApiObject) => boolean;
  /** The resourceVersions of the objects the cache holds now. */
  readonly cachedVersions: () => Iterable<string | undefined>;
  /** The newest revision the informer has delivered. */
  readonly watermark: () => bigint;
}

/** How long the cache may take to catch up with a listed state (kube's watch cache blockTimeout). */
const catchUpTimeoutMs = 3_000;
const recheckMs = 25;

export class Fence {
  private inFlight: Promise<bigint | undefined> | undefined;
  private queued: Promise<bigint | undefined> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly source: FenceSource,
  ) {}

  /**
   * Resolves with a revision X, taken after the call, that the informer has
   * delivered everything up to; undefined when the resource is not served.
   * Rejects with 504 when the informer did not catch up in time.
   */
  check(): Promise<bigint | undefined> {
    if (this.inFlight === undefined) return this.start();
    this.queued ??= this.inFlight.then(
      () => this.start(),
      () => this.start(),
    );
    return this.queued;
  }

  private start(): Promise<bigint | undefined> {
    this.queued = undefined;
    const run = this.run().finally(() => {
      if (this.inFlight === run) this.inFlight = undefined;
    });
    this.inFlight = run;
    return run;
  }

  private async run(): Promise<bigint | undefined> {
    let list: MetadataList;
    try {
      list = await this.client.list<MetadataList>(this.source.path, { labelSelector: this.source.labelSelector }, 'metadata');
    } catch (error) {
      if (isNotServed(error)) return undefined;
      throw error;
    }
    const listed = revision(list.metadata.resourceVersion);
    const expected = (list.items ?? []).filter((item) => this.source.counts?.(item) ?? true).map((item) => item.metadata.resourceVersion);
    const deadline = Date.now() + catchUpTimeoutMs;
    for (;;) {
      if (this.source.watermark() >= listed || sameVersions(expected, this.source.cachedVersions())) return listed;
      if (Date.now() > deadline) throw notCaughtUp(listed, this.source.watermark());
      await new Promise((resolve) => setTimeout(resolve, recheckMs));
    }
  }
}

function sameVersions(expected: readonly (string | undefined)[], cached: Iterable<string | undefined>): boolean {
  const held = new Set<string | undefined>();
  for (const rv of cached) held.add(rv);
  return held.size === expected.length && expected.every((rv) => held.has(rv));
}

/** storage.NewTooLargeResourceVersionError, as a consistent read from the watch cache times out. */
function notCaughtUp(requested: bigint, current: bigint): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}
