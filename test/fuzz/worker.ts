/**
 * One worker runs generated cases one at a time in its own tenant namespace
 * against the server and against kube-apiserver's reference CRD, keeping its
 * seeded HostClaim present on both and checking it is unchanged after every
 * refused write. Workers are isolated by tenant, so that a collection-wide
 * write by one never shows up as a change in another.
 */
import type { DevEnvironment, Tenant } from '../controlplane/environment.js';
import type { Identity, RawClients, RawRequest, RawResponse } from '../support/raw-http.js';
import { REFERENCE_GROUP, SERVED_GROUP, toReference } from '../support/reference-crd.js';
import { bodyBytes, resolve, WRITE_METHODS, type FuzzCase, type Placeholders } from './model.js';
import type { Observation, Outcome } from './oracle.js';

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const isTerminating = (snapshot: Snapshot): boolean => (snapshot.object.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp !== undefined;

const REQUEST_TIMEOUT_MS = 20_000;
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The case's path on the reference group. HardwareData has none, and the
 * request only probes whether kube-apiserver answers before proxying: a
 * read asks for hostclaims, which a tenant may read there as it may read
 * hardwaredata here, so that authorization lets both through alike; a write
 * keeps hardwaredata, which the reference group does not serve, so that the
 * probe never writes.
 */
export function referencePath(c: Pick<FuzzCase, 'comparable' | 'method'>, path: string): string {
  const reference = toReference(path);
  return c.comparable || !READS.has(c.method) ? reference : reference.replaceAll('/hardwaredata', '/hostclaims');
}
const ADMIN: Identity = { user: 'fuzz-admin', groups: ['system:masters'] };

type Side = 'ours' | 'reference';

interface Snapshot {
  readonly resourceVersion: string;
  readonly object: Record<string, unknown>;
}

export class Worker {
  readonly placeholders: Placeholders;
  /** Deletions left terminating (foregroundDeletion, orphan or a case's own finalizer) that this worker finished, per side (see #settleDeletion). */
  readonly settled: Record<Side, number> = { ours: 0, reference: 0 };
  #created = 0;
  /** The target object as last read, per side; undefined after any write that may have changed it. */
  #known: Partial<Record<Side, Snapshot>> = {};

  constructor(
    readonly index: number,
    private readonly env: DevEnvironment,
    private readonly clients: RawClients,
    readonly tenant: Tenant,
    other: Tenant,
  ) {
    this.placeholders = { ns: tenant, other, obj: `fuzz-w${index}`, new: '', worker: `w${index}` };
  }

  /** Sends one case to both servers and observes the target object around a refused write. */
  async run(c: FuzzCase): Promise<Observation> {
    const p: Placeholders = { ...this.placeholders, new: `fuzz-w${this.index}-n${this.#created++}` };
    const write = WRITE_METHODS.has(c.method);
    // Every case starts with the target present on both sides: after a write one side accepted and the
    // other refused (a DELETE), every later read would differ too, hiding what the later cases show.
    const before = await this.#ensureTarget('ours');
    if (c.comparable) await this.#ensureTarget('reference');
    // A case that is not comparable still goes to the reference group through the aggregator: the answer shows
    // whether kube-apiserver answered it itself, before proxying (oracle.ts, answeredByKubeAlone).
    const sendReference = c.comparable || c.route === 'aggregator';
    const [ours, theirs] = await Promise.all([this.#send('ours', c, p), sendReference ? this.#send('reference', c, p) : Promise.resolve(undefined)]);
    if (!write) return { testCase: c, ours, ...(theirs === undefined ? {} : { theirs }) };
    const refused = (outcome: Outcome | undefined): boolean => outcome !== undefined && !('error' in outcome) && outcome.status >= 300;
    if (!refused(ours)) delete this.#known.ours;
    // kube-apiserver may commit a write and then fail to encode its answer (a deletecollection asking for
    // PartialObjectMetadata answers 406 once it has deleted): its side is read again after every write.
    delete this.#known.reference;
    const changed = refused(ours) ? await this.#changeSince(before, c, p) : undefined;
    await this.#removeCreated(p.new, ours, theirs);
    if (c.method === 'DELETE') await this.#settleDeletion(c.comparable);
    return { testCase: c, ours, ...(theirs === undefined ? {} : { theirs }), ...(changed === undefined ? {} : { changed }) };
  }

  #send(side: Side, c: FuzzCase, p: Placeholders): Promise<Outcome> {
    const path = resolve(c.path, p);
    const headers = Object.fromEntries(Object.entries(c.headers).map(([name, v]) => [name, typeof v === 'string' ? resolve(v, p) : [...v]]));
    // The group is renamed after the bytes are spliced in, so that they land at the same place in both bodies.
    const bytes = c.body === undefined ? undefined : bodyBytes(c.body, p);
    const body = bytes === undefined || side === 'ours' ? bytes : Buffer.from(bytes.toString('latin1').replaceAll(`${SERVED_GROUP}/`, `${REFERENCE_GROUP}/`), 'latin1');
    const request: RawRequest = { method: c.method, path: side === 'ours' ? path : referencePath(c, path), headers, ...(body === undefined ? {} : { body }), timeoutMs: REQUEST_TIMEOUT_MS };
    const identity: Identity = c.sender === 'admin' ? ADMIN : { user: this.tenant };
    const sent =
      c.route === 'aggregator'
        ? this.clients.viaAggregator(c.sender === 'admin' ? this.env.adminKubeconfigPath : this.env.tenantKubeconfigPaths[this.tenant], request)
        : side === 'ours'
          ? this.clients.direct(identity, request)
          : this.clients.directToKube(identity, request);
    return sent.catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
  }

  #objectPath(side: Side, name: string): string {
    const path = `/apis/${SERVED_GROUP}/v1alpha1/namespaces/${this.tenant}/hostclaims/${name}`;
    return side === 'ours' ? path : toReference(path);
  }

  #admin(side: Side, request: RawRequest): Promise<RawResponse> {
    return this.clients.viaAggregator(this.env.adminKubeconfigPath, { ...request, timeoutMs: REQUEST_TIMEOUT_MS, path: side === 'ours' ? request.path : toReference(request.path) });
  }

  async #read(side: Side, name: string): Promise<Snapshot | undefined> {
    const response = await this.#admin(side, { path: this.#objectPath('ours', name) });
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw new Error(`reading ${side} ${name}: ${response.status} ${response.body}`);
    const object = response.json as { metadata: { resourceVersion: string } };
    return { resourceVersion: object.metadata.resourceVersion, object: object as unknown as Record<string, unknown> };
  }

  /** The worker's object on one side, created again if a case deleted it. */
  async #ensureTarget(side: Side): Promise<Snapshot> {
    const known = this.#known[side];
    if (known !== undefined) return known;
    let found = await this.#read(side, this.placeholders.obj);
    if (found !== undefined && isTerminating(found)) {
      await this.#finishDeletion(side);
      found = undefined;
    }
    if (found === undefined) {
      const group = side === 'ours' ? SERVED_GROUP : REFERENCE_GROUP;
      const claim = { apiVersion: `${group}/v1alpha1`, kind: 'HostClaim', metadata: { name: this.placeholders.obj, labels: { 'fuzz-worker': this.placeholders.worker } }, spec: { poweredOn: false } };
      const created = await this.#admin(side, { method: 'POST', path: `/apis/${SERVED_GROUP}/v1alpha1/namespaces/${this.tenant}/hostclaims`, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(claim) });
      if (created.status !== 201) throw new Error(`seeding ${side} ${this.placeholders.obj}: ${created.status} ${created.body}`);
      found = await this.#read(side, this.placeholders.obj);
      if (found === undefined) throw new Error(`seeded ${side} ${this.placeholders.obj} is gone`);
    }
    this.#known[side] = found;
    return found;
  }

  /**
   * A DELETE with propagationPolicy Foreground or Orphan leaves the target
   * terminating with a foregroundDeletion or orphan finalizer. The fuzz
   * environment runs no garbage collector (it would remove them on each side
   * at its own time), so the worker finishes every such deletion here, on
   * both sides, before the next case.
   */
  async #settleDeletion(comparable: boolean): Promise<void> {
    for (const side of comparable ? (['ours', 'reference'] as const) : (['ours'] as const)) {
      const found = await this.#read(side, this.placeholders.obj);
      if (found !== undefined && isTerminating(found)) {
        this.settled[side]++;
        await this.#finishDeletion(side);
        this.#known = {};
      }
    }
  }

  /**
   * A case may have deleted the target with finalizers left on it (its own,
   * or foregroundDeletion/orphan): it would vanish during a later case.
   */
  async #finishDeletion(side: Side): Promise<void> {
    const path = this.#objectPath('ours', this.placeholders.obj);
    await this.#admin(side, { method: 'PATCH', path, headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"metadata":{"finalizers":null}}' });
    for (let attempt = 0; attempt < 100 && (await this.#read(side, this.placeholders.obj)) !== undefined; attempt++) await delay(100);
  }

  /**
   * What a refused write changed on our side: the target's resourceVersion
   * (nothing else writes it: the environment runs without the binder), or a
   * create that left an object behind.
   */
  async #changeSince(before: Snapshot, c: FuzzCase, p: Placeholders): Promise<string | undefined> {
    const after = await this.#read('ours', this.placeholders.obj);
    // Whatever this shows, the next case starts from what is there now, not from a stale snapshot.
    if (after === undefined) {
      delete this.#known.ours;
      return 'target deleted';
    }
    this.#known.ours = after;
    if (c.method === 'POST' && (await this.#read('ours', p.new)) !== undefined) return 'object created';
    if (after.resourceVersion === before.resourceVersion) return undefined;
    const fields = [...new Set([...Object.keys(before.object), ...Object.keys(after.object)])].filter((key) => JSON.stringify(before.object[key]) !== JSON.stringify(after.object[key]));
    return `resourceVersion moved (${fields.join(', ')} differ)`;
  }

  /**
   * Objects a case created are removed, so that a long run does not grow the
   * store; one created with finalizers (a case's own, or foregroundDeletion,
   * which no garbage collector removes here) has them removed too.
   */
  async #removeCreated(name: string, ours: Outcome, theirs: Outcome | undefined): Promise<void> {
    for (const [side, outcome] of [['ours', ours], ['reference', theirs]] as const) {
      if (outcome !== undefined && !('error' in outcome) && outcome.status === 201) {
        const createdName = (outcome.json as { metadata?: { name?: string } } | undefined)?.metadata?.name ?? name;
        const path = this.#objectPath('ours', encodeURIComponent(createdName));
        const deleted = await this.#admin(side, { method: 'DELETE', path }).catch(() => undefined);
        // A deletion that waits for finalizers answers the terminating object, not a Status.
        if (deleted?.status === 200 && (deleted.json as { kind?: unknown } | undefined)?.kind !== 'Status') {
          await this.#admin(side, { method: 'PATCH', path, headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"metadata":{"finalizers":null}}' }).catch(() => undefined);
        }
      }
    }
  }
}
