/**
 * Per-requester projection: the one output hook of the generic REST layer.
 * GET, LIST (JSON, YAML, Table, PartialObjectMetadata) and watch pass every
 * object through it, for every kind; a kind's strategy supplies only its
 * projection (`ResourceProjection`). kube-apiserver has no such hook (a
 * CRD's response is the same for every reader); the closest is OpenShift's
 * Project, whose content follows the requester's rights.
 *
 * Stores hold and return the **tenant form**: what every reader of the
 * object's namespace may see. An object derived from infrastructure (a
 * HostClaim's host, a HardwareData's BareMetalHost) may have an
 * **infrastructure admin form** with more: a requester who may `get`
 * BareMetalHosts in the infrastructure namespace (the kind's
 * `infrastructureAccess`) gets that form. The decision is taken once per
 * infrastructure namespace per request (per watcher for a watch), never per
 * object, and an undecided or failed check is the tenant form: the safe
 * default is what tenants see.
 */
import type { UserInfo } from '../user.js';
import type { ApiObject } from './types.js';

/** Who a response is for: the two forms an object can take. */
export type ProjectionClass = 'tenant' | 'infrastructureAdmin';

/** What a kind supplies: where its objects come from, and their admin form. */
export interface ResourceProjection {
  /**
   * The infrastructure namespace whose admins see more of the object, or
   * undefined when the object has nothing more to show (then nobody is asked about).
   */
  infrastructureNamespace(object: ApiObject): string | undefined;
  /** The object as an infrastructure admin sees it (pure; the same input gives the same object, so its bytes can be shared). */
  forInfrastructureAdmin(object: ApiObject): ApiObject;
  /** Whether the user is an infrastructure admin of the namespace. */
  infrastructureAccess(user: UserInfo, namespace: string): Promise<boolean>;
}

/**
 * One requester's projection, for one request or one watcher: remembers
 * each infrastructure namespace's decision for its whole life.
 */
export class RequesterProjection {
  private readonly decided = new Map<string, boolean>();
  private readonly deciding = new Map<string, Promise<void>>();

  constructor(
    private readonly projection: ResourceProjection | undefined,
    private readonly user: UserInfo,
  ) {}

  /** Decides the infrastructure namespaces of the objects (one check each, in parallel). */
  async prepare(objects: Iterable<ApiObject>): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const object of objects) {
      const namespace = this.namespaceOf(object);
      if (namespace !== undefined && !this.decided.has(namespace)) pending.push(this.decide(namespace));
    }
    await Promise.all(pending);
  }

  /** Whether `classOf(object)` is final (its namespace decided, or nothing to decide). */
  isDecided(object: ApiObject): boolean {
    const namespace = this.namespaceOf(object);
    return namespace === undefined || this.decided.has(namespace);
  }

  classOf(object: ApiObject): ProjectionClass {
    const namespace = this.namespaceOf(object);
    return namespace !== undefined && this.decided.get(namespace) === true ? 'infrastructureAdmin' : 'tenant';
  }

  project(object: ApiObject): ApiObject {
    if (this.projection === undefined || this.classOf(object) === 'tenant') return object;
    return this.projection.forInfrastructureAdmin(object);
  }

  /** Every object prepared and projected. */
  async projectAll(objects: readonly ApiObject[]): Promise<ApiObject[]> {
    await this.prepare(objects);
    return objects.map((object) => this.project(object));
  }

  private namespaceOf(object: ApiObject): string | undefined {
    return this.projection?.infrastructureNamespace(object);
  }

  private decide(namespace: string): Promise<void> {
    let deciding = this.deciding.get(namespace);
    if (deciding === undefined) {
      deciding = this.ask(namespace).then((admin) => {
        this.decided.set(namespace, admin);
        this.deciding.delete(namespace);
      });
      this.deciding.set(namespace, deciding);
    }
    return deciding;
  }

  /** An authorizer that cannot answer gives the tenant form. */
  private async ask(namespace: string): Promise<boolean> {
    if (this.projection === undefined) return false;
    try {
      return await this.projection.infrastructureAccess(this.user, namespace);
    } catch {
      return false;
    }
  }
}
