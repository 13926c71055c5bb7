/**
 * The hosts selection looks at (selection.ts), indexed so that a claim
 * looks at candidates only, in the order it prefers them, and stops at the
 * first it may take, instead of filtering every host of the cluster: the
 * candidates (isCandidate) of each host namespace, kept sorted by host key,
 * and the hosts carrying each node-reuse label. Kept up to date from the
 * events of the shared host cache (a relist comes as the adds, updates and
 * deletes it implies), so it always holds what the cache holds.
 */
import { hostKeys, type BareMetalHost } from '../metal3/types.js';
import { compareHostKeys, hostKey, isCandidate, type SelectableHosts } from './selection.js';

export class HostSelectionIndex implements SelectableHosts {
  private readonly hosts = new Map<string, BareMetalHost>();
  /** Candidate host keys by host namespace, sorted by compareHostKeys. */
  private readonly candidateKeys = new Map<string, string[]>();
  /** Host keys by node-reuse label value. */
  private readonly poolKeys = new Map<string, Set<string>>();

  /** A host added or changed. */
  set(host: BareMetalHost): void {
    const key = hostKey(host);
    this.forget(key);
    this.hosts.set(key, host);
    if (isCandidate(host)) insertSorted(this.keysOf(host.metadata.namespace ?? ''), key);
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
    this.candidateKeys.clear();
    this.poolKeys.clear();
  }

  host(key: string): BareMetalHost | undefined {
    return this.hosts.get(key);
  }

  /** The candidates of the namespaces merged in key order: each namespace's are sorted already. */
  *candidates(hostNamespaces: ReadonlySet<string>): Generator<BareMetalHost> {
    const lists = [...hostNamespaces].map((namespace) => this.candidateKeys.get(namespace)).filter((keys) => keys !== undefined);
    const next = lists.map(() => 0);
    for (;;) {
      let best = -1;
      for (let i = 0; i < lists.length; i++) {
        const key = lists[i]?.[next[i] ?? 0];
        if (key !== undefined && (best < 0 || compareHostKeys(key, lists[best]?.[next[best] ?? 0] ?? '') < 0)) best = i;
      }
      if (best < 0) return;
      const key = lists[best]?.[next[best] ?? 0] ?? '';
      next[best] = (next[best] ?? 0) + 1;
      const host = this.hosts.get(key);
      if (host !== undefined) yield host;
    }
  }

  labelled(pool: string): BareMetalHost[] {
    return [...(this.poolKeys.get(pool) ?? [])].map((key) => this.hosts.get(key)).filter((host) => host !== undefined);
  }

  private forget(key: string): void {
    const previous = this.hosts.get(key);
    if (previous === undefined) return;
    this.hosts.delete(key);
    const namespace = previous.metadata.namespace ?? '';
    const keys = this.candidateKeys.get(namespace);
    if (keys !== undefined) {
      removeSorted(keys, key);
      if (keys.length === 0) this.candidateKeys.delete(namespace);
    }
    const pool = poolOf(previous);
    const pooled = pool === undefined ? undefined : this.poolKeys.get(pool);
    if (pool !== undefined && pooled !== undefined) {
      pooled.delete(key);
      if (pooled.size === 0) this.poolKeys.delete(pool);
    }
  }

  private keysOf(namespace: string): string[] {
    let keys = this.candidateKeys.get(namespace);
    if (keys === undefined) {
      keys = [];
      this.candidateKeys.set(namespace, keys);
    }
    return keys;
  }
}

function poolOf(host: BareMetalHost): string | undefined {
  return host.metadata.labels?.[hostKeys.nodeReuse];
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

function insertSorted(keys: string[], key: string): void {
  keys.splice(position(keys, key), 0, key);
}

function removeSorted(keys: string[], key: string): void {
  const at = position(keys, key);
  if (keys[at] === key) keys.splice(at, 1);
}
