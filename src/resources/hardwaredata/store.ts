/**
 * Reads of HardwareData for the generic REST layer (get, list and, through
 * the hub, watch). Nothing is stored: every object is a projection of
 * BareMetalHosts (see projection.ts).
 *
 * Consistency: with resourceVersion unset, GET and LIST compute the answer
 * from fresh lists read from kube-apiserver (quorum reads), never from the
 * informers. Waiting for the informers to reach the current revision was
 * the alternative, but an informer only moves on when its own resource
 * changes or a bookmark arrives (about once a minute), so a quiet resource
 * would stall every read. The list's resourceVersion is the oldest of the
 * revisions read: a watch from it may repeat a change the list already
 * showed, never miss one. An object the hub already holds with the same
 * content keeps the hub's resourceVersion, so reads and watches agree.
 * resourceVersion=0 and NotOlderThan reads are served from the hub.
 */
import { checkPathSegmentName } from '../../api/request-info.js';
import { escapeFieldValue } from '../../api/selectors.js';
import type { K8sSchema } from '../../api/openapi/schema-source.js';
import { ApiError, badRequest, notFound, type GroupResource } from '../../api/status.js';
import { SelectionPredicate } from '../../api/rest/selection.js';
import type { ListQuery, ReadableStore } from '../../api/rest/store.js';
import { compareStorageKeys, revision, type ApiObject, type ObjectList } from '../../api/rest/types.js';
import type { WatchHub } from '../../api/rest/watch-hub.js';
import type { KubeClient } from '../../backing/kube-client.js';
import { isNotServed } from '../../backing/shared-informers.js';
import { metal3Paths, type BareMetalHost, type HostDeployPolicy, type Namespace } from '../../metal3/types.js';
import { hardwareDataName } from '../../tenancy/host-references.js';
import { sameContent, withResourceVersion, type HardwareDataFeed, type HostRef } from './feed.js';
import { claimNamespacesOf, hardwareData, hardwareDataApiVersion, tenantView } from './projection.js';

/** What one consistent read covers: a tenant namespace (or all), one host (or all). */
interface ReadScope {
  readonly namespace: string | undefined;
  readonly host?: HostRef;
}

interface Projected {
  readonly objects: ApiObject[];
  readonly resourceVersion: string;
}

interface FreshList<T> {
  readonly items: T[];
  /** undefined when the resource is not served (CRD absent). */
  readonly resourceVersion: string | undefined;
}

export class HardwareDataStore implements ReadableStore {
  constructor(
    private readonly client: KubeClient,
    private readonly feed: HardwareDataFeed,
    /** The HostClaims, read consistently to tell whose a bound host is. */
    private readonly claims: ReadableStore,
    private readonly specSchema: K8sSchema,
    private readonly gr: GroupResource,
  ) {}

  get hub(): WatchHub {
    return this.feed.hub;
  }

  async get(namespace: string, name: string, resourceVersion: string | undefined): Promise<ApiObject> {
    checkPathSegmentName(name);
    const object =
      resourceVersion === undefined
        ? (await this.fresh({ namespace, ...hostScope(name) })).objects.find((o) => o.metadata.name === name)
        : (await this.cached(namespace, resourceVersion, undefined)).find((o) => o.metadata.name === name);
    if (object === undefined) throw notFound(this.gr, name);
    return object;
  }

  async list(namespace: string | undefined, query: ListQuery): Promise<ObjectList> {
    // Lists are never paginated (as kube's watch cache), so no continue token was ever issued.
    if (query.continue !== undefined) throw badRequest('continue key is not valid: HardwareData lists are not paginated');
    // A name pinned by the field selector narrows the fresh reads to one host; the REST layer applies the selection.
    const name = query.selection.matchesSingle();
    const { objects, resourceVersion } =
      query.resourceVersion === undefined
        ? await this.fresh({ namespace, ...(name === undefined ? {} : hostScope(name)) })
        : { objects: await this.cached(namespace, query.resourceVersion, query.resourceVersionMatch), resourceVersion: this.hub.currentResourceVersion() };
    return { apiVersion: hardwareDataApiVersion, kind: 'HardwareDataList', metadata: { resourceVersion }, items: objects };
  }

  /** From the hub, once it has reached resourceVersion (kube's NotOlderThan; "0": whatever it holds). */
  private async cached(namespace: string | undefined, resourceVersion: string, match: string | undefined): Promise<ApiObject[]> {
    await this.hub.waitForResourceVersion(resourceVersion);
    if (match === 'Exact' && resourceVersion !== this.hub.currentResourceVersion()) {
      // Past states are not kept: like a compacted revision in kube.
      throw new ApiError(410, 'Expired', `too old resource version: ${resourceVersion} (${this.hub.currentResourceVersion()})`);
    }
    return this.hub.list(namespace);
  }

  /** Projections computed from fresh quorum reads (see the module comment). */
  private async fresh(scope: ReadScope): Promise<Projected> {
    const [hosts, policies, namespaces, claims] = await Promise.all([
      this.read<BareMetalHost>(metal3Paths.bareMetalHosts, scope.host === undefined ? undefined : `metadata.namespace=${escapeFieldValue(scope.host.namespace)},metadata.name=${escapeFieldValue(scope.host.name)}`),
      this.read<HostDeployPolicy>(metal3Paths.hostDeployPolicies, scope.host === undefined ? undefined : `metadata.namespace=${escapeFieldValue(scope.host.namespace)}`),
      this.read<Namespace>(metal3Paths.namespaces, scope.namespace === undefined ? undefined : `metadata.name=${escapeFieldValue(scope.namespace)}`),
      this.claims.list(scope.namespace, { selection: SelectionPredicate.everything() }),
    ]);
    const claimNamespaces = claimNamespacesOf(claims.items);
    const resourceVersion = oldest([hosts.resourceVersion, policies.resourceVersion, namespaces.resourceVersion, claims.metadata.resourceVersion]);
    const objects = namespaces.items.flatMap((namespace) => {
      const view = tenantView(namespace, policies.items, claimNamespaces);
      return hosts.items.map((host) => hardwareData(host, view, this.specSchema)).filter((o) => o !== undefined);
    });
    return { objects: objects.map((o) => this.versioned(o, resourceVersion)).sort(compareStorageKeys), resourceVersion };
  }

  /** The hub's copy when it has the same content (same resourceVersion as watchers saw), else the read's revision. */
  private versioned(object: ApiObject, resourceVersion: string): ApiObject {
    const held = this.hub.get(object.metadata.namespace ?? '', object.metadata.name ?? '');
    return held !== undefined && sameContent(held, object) ? held : withResourceVersion(object, resourceVersion);
  }

  private async read<T>(path: string, fieldSelector: string | undefined): Promise<FreshList<T>> {
    try {
      const list = await this.client.get<{ metadata: { resourceVersion?: string }; items: T[] }>(path, { fieldSelector });
      return { items: list.items, resourceVersion: list.metadata.resourceVersion };
    } catch (error) {
      if (isNotServed(error)) return { items: [], resourceVersion: undefined };
      throw error;
    }
  }
}

/** The host a name designates when it is in the readable `<namespace>.<name>` form; digest names need every host. */
function hostScope(name: string): { host?: HostRef } {
  const dot = name.indexOf('.');
  if (dot <= 0) return {};
  const host = { namespace: name.slice(0, dot), name: name.slice(dot + 1) };
  return hardwareDataName(host.namespace, host.name) === name ? { host } : {};
}

function oldest(resourceVersions: readonly (string | undefined)[]): string {
  const known = resourceVersions.map(revision).filter((rv) => rv >= 0n);
  if (known.length === 0) return '';
  return known.reduce((a, b) => (a < b ? a : b)).toString();
}
