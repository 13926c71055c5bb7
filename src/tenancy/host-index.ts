/**
 * The hosts selection looks at (selection.ts), indexed so that a claim
 * looks at candidates only, in the order it prefers them, and stops at the
 * first it may take in each host namespace, instead of filtering every
 * host of the cluster: the candidates (isCandidate) of each host
 * namespace, kept sorted by host key, and the hosts carrying each
 * node-reuse label. Kept up to date from the
 * events of the shared host cache (a relist comes as the adds, updates and
 * deletes it implies), so it always holds what the cache holds.
 */
import { hostKeys, type BareMetalHost } from '../metal3/types.js';
import { compareHostKeys, hostKey, isCandidate, type SelectableHosts } from './selection.js';

export class HostSelectionIndex implements SelectableHosts {
  private readonly hosts = new Map<string, BareMetalHost>();
  /** The candidates of each host namespace, sorted by compareHostKeys. */
  private readonly candidateLists = new Map<string, Candidates>();
  /** Host keys by node-reuse label value. */
  private readonly poolKeys = new Map<string, Set<string>>();

  /** A host added or changed. */
  set(host: BareMetalHost): void {
    const key = hostKey(host);
    this.forget(key);
    this.hosts.set(key, host);
    if (isCandidate(host)) insertSorted(this.listOf(host.metadata.namespace ?? ''), key, host);
    const pool = poolOf(host);
    if (pool !== undefined) {
      let keys = this.poolKeys.get(pool);
      if (keys === undefined) {
        keys = new Set();
        this.poolKeys.set(pool, keys);
      }
      keys.add(key);
    }
  }

  /** A host deleted. */
  delete(host: BareMetalHost): void {
    this.forget(hostKey(host));
  }

  clear(): void {
    this.hosts.clear();
    this.candidateLists.clear();
    this.poolKeys.clear();
  }

  host(key: string): BareMetalHost | undefined {
    return this.hosts.get(key);
  }

  /** The index's own list (a claim may walk thousands): read it, never change it. */
  candidates(hostNamespace: string): readonly BareMetalHost[] {
    return this.candidateLists.get(hostNamespace)?.hosts ?? [];
  }

  labelled(pool: string): BareMetalHost[] {
    return [...(this.poolKeys.get(pool) ?? [])].map((key) => this.hosts.get(key)).filter((host) => host !== undefined);
  }

  private forget(key: string): void {
    const previous = this.hosts.get(key);
    if (previous === undefined) return;
    this.hosts.delete(key);
    const namespace = previous.metadata.namespace ?? '';
    const list = this.candidateLists.get(namespace);
    if (list !== undefined) {
      removeSorted(list, key);
      if (list.keys.length === 0) this.candidateLists.delete(namespace);
    }
    const pool = poolOf(previous);
    const pooled = pool === undefined ? undefined : this.poolKeys.get(pool);
    if (pool !== undefined && pooled !== undefined) {
      pooled.delete(key);
      if (pooled.size === 0) this.poolKeys.delete(pool);
    }
  }

  private listOf(namespace: string): Candidates {
    let list = this.candidateLists.get(namespace);
    if (list === undefined) {
      list = { keys: [], hosts: [] };
      this.candidateLists.set(namespace, list);
    }
    return list;
  }
}

function poolOf(host: BareMetalHost): string | undefined {
  return host.metadata.labels?.[hostKeys.nodeReuse];
}

/** Hosts and their keys, in the same order (a plain array to walk, and keys to search). */
interface Candidates {
  readonly keys: string[];
  readonly hosts: BareMetalHost[];
}

/** Where the key is, or goes, in the sorted keys (binary search). */
function position(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareHostKeys(keys[middle] ?? '', key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function insertSorted(list: Candidates, key: string, host: BareMetalHost): void {
  const at = position(list.keys, key);
  list.keys.splice(at, 0, key);
  list.hosts.splice(at, 0, host);
}

function removeSorted(list: Candidates, key: string): void {
  const at = position(list.keys, key);
  if (list.keys[at] !== key) return;
  list.keys.splice(at, 1);
  list.hosts.splice(at, 1);
}
