/**
 * Reads of HardwareData for the generic REST layer (get, list and, through
 * the derived hub, watch), answered from the model (model.ts): nothing is
 * stored, every object is computed when asked.
 *
 * Consistency as kube-apiserver's watch cache serves a CRD (KEP-2340):
 *  - resourceVersion unset, GET: the object's own inputs proven current and
 *    the object computed from them (object-read.ts);
 *  - resourceVersion unset, LIST: the feed first proves every input current
 *    (fences, coalesced across concurrent requests) and applies everything
 *    up to the oldest fence, so the answer reflects every write
 *    acknowledged before the request, on any replica;
 *  - "0": whatever the model holds now (a list ignores `limit`, as kube);
 *  - NotOlderThan X: once the model has reached X; a model behind X first
 *    proves its inputs current, as a consistent LIST does (X may come from
 *    another resource, a HostClaim write say, that changed nothing here:
 *    kube's watch cache asks etcd for progress then), 504 after 3 s;
 *  - Exact: only the current resourceVersion (no past states are kept: 410).
 *
 * Lists paginate (`limit`/`continue`) in kube's order, by `<namespace>/<name>`,
 * computing only the page (plus one object, to know whether more follow).
 * Every page carries the first page's resourceVersion; later pages show the
 * state when they are served (kube shows the first page's snapshot): a watch
 * from the list's resourceVersion replays everything since, so a client that
 * lists then watches converges, with possible repeats.
 */
import { checkPathSegmentName } from '../../api/request-info.js';
import { ApiError, notFound, type GroupResource } from '../../api/status.js';
import type { ListQuery, ReadableStore } from '../../api/rest/store.js';
import { revision, type ApiObject, type ObjectList } from '../../api/rest/types.js';
import type { WatchHub } from '../../api/rest/watch-hub.js';
import type { HardwareDataTokens, ListIdentity } from './continue-token.js';
import type { HardwareDataModel, ObjectPosition } from './model.js';
import type { ScopedRead } from './object-read.js';
import { hardwareDataApiVersion } from './projection.js';

/** What the store reads from: the live model, its hub, and the freshness proof (HardwareDataFeed). */
export interface HardwareDataSource {
  readonly hub: WatchHub;
  readonly model: HardwareDataModel;
  /** Resolves once the model reflects every write acknowledged before the call. */
  consistent(): Promise<void>;
  /** A consistent GET fenced by the object's own inputs; undefined: use consistent() and the model. */
  consistentObject(namespace: string, name: string): Promise<ScopedRead>;
}

export class HardwareDataStore implements ReadableStore {
  constructor(
    private readonly feed: HardwareDataSource,
    private readonly gr: GroupResource,
    private readonly tokens: HardwareDataTokens,
  ) {}

  get hub(): WatchHub {
    return this.feed.hub;
  }

  async get(namespace: string, name: string, resourceVersion: string | undefined): Promise<ApiObject> {
    checkPathSegmentName(name);
    const scoped = resourceVersion === undefined ? await this.feed.consistentObject(namespace, name) : undefined;
    if (scoped !== undefined) {
      if (scoped.object === undefined) throw notFound(this.gr, name);
      return scoped.object;
    }
    await this.reachFor(resourceVersion, undefined);
    const object = this.feed.model.get(namespace, name);
    if (object === undefined) throw notFound(this.gr, name);
    return object;
  }

  async list(namespace: string | undefined, query: ListQuery): Promise<ObjectList> {
    const identity: ListIdentity = { namespace: namespace ?? '', labelSelector: query.selection.label.toString(), fieldSelector: query.selection.field.toString() };
    const start = query.continue === undefined ? undefined : await this.tokens.decode(query.continue, identity);
    if (start === undefined) await this.reachFor(query.resourceVersion, query.resourceVersionMatch);
    const resourceVersion = start?.resourceVersion.toString() ?? this.hub.currentResourceVersion();
    // resourceVersion=0 ignores limit (computeListLimit).
    const limit = query.resourceVersion === '0' && start === undefined ? undefined : Number(query.limit ?? 0) || undefined;
    const items: ApiObject[] = [];
    let more = false;
    for (const object of this.candidates(namespace, query, start?.after)) {
      if (!query.selection.matches(object)) continue;
      if (limit !== undefined && items.length === limit) {
        more = true;
        break;
      }
      items.push(object);
    }
    const last = items.at(-1);
    const next = more && last !== undefined ? await this.tokens.encode({ resourceVersion: BigInt(resourceVersion), after: positionOf(last) }, identity) : undefined;
    return { apiVersion: hardwareDataApiVersion, kind: 'HardwareDataList', metadata: { resourceVersion, ...(next === undefined ? {} : { continue: next }) }, items };
  }

  /** The objects a list may return, in order, after `after`: one object for a pinned name, one namespace's, or everything lazily. */
  private *candidates(namespace: string | undefined, query: ListQuery, after: ObjectPosition | undefined): Generator<ApiObject> {
    const model = this.feed.model;
    const name = query.selection.matchesSingle();
    if (namespace !== undefined && name !== undefined) {
      const object = model.get(namespace, name);
      if (object !== undefined && (after === undefined || name > after.name)) yield object;
      return;
    }
    if (namespace === undefined) {
      yield* model.listFrom(after);
      return;
    }
    for (const object of model.list(namespace)) if (after === undefined || (object.metadata.name ?? '') > after.name) yield object;
  }

  /** Waits until the model may answer a read at `resourceVersion` (see the module comment). */
  private async reachFor(resourceVersion: string | undefined, match: string | undefined): Promise<void> {
    if (resourceVersion === undefined) {
      await this.feed.consistent();
      return;
    }
    // A malformed resourceVersion (revision -1) is for waitForResourceVersion to refuse.
    if (revision(resourceVersion) > revision(this.hub.currentResourceVersion())) await this.feed.consistent();
    await this.hub.waitForResourceVersion(resourceVersion);
    if (match === 'Exact' && resourceVersion !== this.hub.currentResourceVersion()) {
      // Past states are not kept: like a compacted revision in kube.
      throw new ApiError(410, 'Expired', `too old resource version: ${resourceVersion} (${this.hub.currentResourceVersion()})`);
    }
  }
}

function positionOf(object: ApiObject): ObjectPosition {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}
