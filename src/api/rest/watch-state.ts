/**
 * The current state a WatchHub serves (the watch cache's store,
 * k8s.io/apiserver pkg/storage/cacher watch_cache.go `store`). Either the
 * hub stores the objects it is fed (StoredState: a resource with its own
 * objects, O(objects)), or a derived resource supplies a HubStateSource that
 * computes objects on demand from its inputs, so the hub holds only the
 * history of changes.
 */
import { compareStorageKeys, type ApiObject } from './types.js';
import { keepEncoding } from './serialized.js';

export interface HubStateSource {
  get(namespace: string, name: string): ApiObject | undefined;
  /** Objects of one namespace, or of all, in kube's list order (compareStorageKeys). */
  list(namespace?: string): ApiObject[];
  /** How many objects there are (for stats; may be computed). */
  count(): number;
}

interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

export function keyOf(object: ApiObject): ObjectKey {
  const name = object.metadata.name;
  if (name === undefined || name === '') throw new Error('WatchHub: object without metadata.name');
  return { namespace: object.metadata.namespace ?? '', name };
}

/** Objects by namespace ('' for cluster-scoped) and name. */
export class StoredState implements HubStateSource {
  private readonly objects = new Map<string, Map<string, ApiObject>>();
  private size = 0;

  replace(objects: readonly ApiObject[]): void {
    const keyed = objects.map((object) => [keyOf(object), object] as const); // validate before replacing anything
    this.objects.clear();
    this.size = 0;
    for (const [key, object] of keyed) this.store(key, object);
  }

  /** Applies a change; returns the state before it. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: ApiObject): ApiObject | undefined {
    const key = keyOf(object);
    const prev = this.get(key.namespace, key.name);
    if (type === 'DELETED') this.remove(key);
    else this.store(key, object);
    return prev;
  }

  get(namespace: string, name: string): ApiObject | undefined {
    return this.objects.get(namespace)?.get(name);
  }

  list(namespace?: string): ApiObject[] {
    const namespaces = namespace === undefined ? [...this.objects.values()] : [this.objects.get(namespace) ?? new Map<string, ApiObject>()];
    return namespaces.flatMap((names) => [...names.values()]).sort(compareStorageKeys);
  }

  count(): number {
    return this.size;
  }

  private store(key: ObjectKey, object: ApiObject): void {
    let names = this.objects.get(key.namespace);
    if (names === undefined) {
      names = new Map();
      this.objects.set(key.namespace, names);
    }
    if (!names.has(key.name)) this.size++;
    names.set(key.name, object);
    keepEncoding(object);
  }

  private remove(key: ObjectKey): void {
    const names = this.objects.get(key.namespace);
    if (names?.delete(key.name) !== true) return;
    this.size--;
    if (names.size === 0) this.objects.delete(key.namespace);
  }
}
