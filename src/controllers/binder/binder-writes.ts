/**
 * The binder's reads and writes of kube-apiserver, each remembered where the
 * binder's event routing needs it:
 * - every write is noted in OwnWrites, so that its echo from the shared
 *   cache does not queue the claim again;
 * - a record write refused with 409 marks the record stale, so the claim's
 *   next reconcile reads it fresh instead of from the cache that lagged;
 * - a record write raises the replica's watermark, as an API write does
 *   (replica-watermarks.ts).
 */
import type { ApiObject } from '../../api/rest/types.js';
import { isConflict, isNotFound, type KubeClient } from '../../backing/kube-client.js';
import type { SharedInformer } from '../../backing/shared-informers.js';
import type { WriteAcknowledgement } from '../../backing/replica-watermarks.js';
import { hostKey } from '../../tenancy/selection.js';
import { metal3Paths, type BareMetalHost } from '../../metal3/types.js';
import type { Claim } from './claim.js';
import type { OwnWrites } from './own-writes.js';

export class BinderWrites {
  /** Records whose cached version one of our writes found stale (409): read fresh at their next reconcile. */
  private readonly staleRecords = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    private readonly recordsPath: string,
    private readonly ownWrites: OwnWrites,
    /** The replica's watermarks: a record write is acknowledged there, as the REST layer's writes are. */
    private readonly acknowledgement: WriteAcknowledgement,
  ) {}

  /**
   * The record from the shared cache (the event that queued the claim is in
   * it), or read fresh after a write found the cached version stale. Absent
   * from the cache: not created yet as far as this replica knows (its event
   * will queue it) or deleted.
   */
  async currentRecord(key: string, records: SharedInformer<ApiObject>, storageNamespace: string): Promise<ApiObject | undefined> {
    if (this.staleRecords.delete(key)) return this.get<ApiObject>(this.recordPath(key));
    return records.get(storageNamespace, key);
  }

  /** Whether a write of this reconcile found the cached record stale. */
  isStale(key: string): boolean {
    return this.staleRecords.has(key);
  }

  /** A record read fresh (undefined: gone). */
  record(name: string): Promise<ApiObject | undefined> {
    return this.get<ApiObject>(this.recordPath(name));
  }

  /** A host read fresh (undefined: gone). */
  host(keyOfHost: string): Promise<BareMetalHost | undefined> {
    return this.get<BareMetalHost>(metal3Paths.bareMetalHost(...splitKey(keyOfHost)));
  }

  /** PUT of a record (or its status); undefined when it changed or vanished since it was read (the record's next event requeues). */
  async writeRecord(record: ApiObject, subresource: '' | '/status' = ''): Promise<ApiObject | undefined> {
    const name = record.metadata.name ?? '';
    this.acknowledgement.admit();
    try {
      const written = await this.client.request<ApiObject>('PUT', `${this.recordPath(name)}${subresource}`, { body: record });
      await this.acknowledgement.acknowledged(written.metadata.resourceVersion);
      this.ownWrites.wrote(name, 'record', written.metadata.resourceVersion);
      return written;
    } catch (error) {
      if (isConflict(error)) this.staleRecords.add(name);
      if (isConflict(error) || isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** PUT of a host with the resourceVersion read: a conflict is an error, retried from fresh state. */
  async writeHost(host: BareMetalHost, forClaim: Claim | undefined): Promise<BareMetalHost> {
    const written = await this.client.request<BareMetalHost>('PUT', metal3Paths.bareMetalHost(host.metadata.namespace ?? '', host.metadata.name), { body: host });
    if (forClaim !== undefined) this.ownWrites.wrote(forClaim.identity.name, hostKey(written), written.metadata.resourceVersion);
    return written;
  }

  /** A JSON merge patch of a host; the patch carries the resourceVersion it was computed from, kube-apiserver's precondition. */
  async patchHost(host: BareMetalHost, patch: object, forClaim: Claim): Promise<BareMetalHost> {
    const written = await this.client.request<BareMetalHost>('PATCH', metal3Paths.bareMetalHost(host.metadata.namespace ?? '', host.metadata.name), {
      body: patch,
      contentType: 'application/merge-patch+json',
    });
    this.ownWrites.wrote(forClaim.identity.name, hostKey(written), written.metadata.resourceVersion);
    return written;
  }

  /** Forgets every stale mark (a leadership term ended). */
  clear(): void {
    this.staleRecords.clear();
  }

  private recordPath(name: string): string {
    return `${this.recordsPath}/${name}`;
  }

  private async get<T>(path: string): Promise<T | undefined> {
    try {
      return await this.client.get<T>(path);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}

/** `<namespace>/<name>` of a host key. */
export function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
