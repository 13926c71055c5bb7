/**
 * What consistent reads from the shared caches cost kube-apiserver
 * (backing/consistent-read.ts): the probes sent, and how each fence ended.
 * kube-apiserver counts its own consistent reads from the watch cache
 * (`apiserver_watch_cache_consistent_read_total`, by success and fallback);
 * ours need a probe where kube's need none, so the probes are counted too:
 * fences per probe is how well concurrent reads share them. Every series
 * of a resource exists at 0 from its first fence.
 */
import { Counter, type Registry } from 'prom-client';

/** How a fence ended: the cache may answer, or why the read goes to kube-apiserver (`error`: the probe failed). */
export type FenceResult = 'fresh' | 'unhealthy' | 'timeout' | 'error';

/** What a fence reports. */
export interface FenceObserver {
  probeSent(): void;
  fenced(result: FenceResult): void;
}

/** The observer of the fences of the backing resource whose collection path is given. */
export type FenceObservers = (path: string) => FenceObserver;

export const unobservedFences: FenceObserver = {
  probeSent: () => {
    // Nothing to count.
  },
  fenced: () => {
    // Nothing to count.
  },
};

const results: readonly FenceResult[] = ['fresh', 'unhealthy', 'timeout', 'error'];

export class ConsistentReadMetrics {
  private readonly probes: Counter;
  private readonly fences: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.probes = new Counter({
      name: 'hostclaim_apiserver_consistent_read_probes_total',
      help: 'Consistent LISTs sent to kube-apiserver to prove a shared cache current, by backing resource.',
      labelNames: ['resource'],
      registers,
    });
    this.fences = new Counter({
      name: 'hostclaim_apiserver_consistent_read_fences_total',
      help: 'Consistent reads fenced against a shared cache, by backing resource and result (fresh: answered from the cache).',
      labelNames: ['resource', 'result'],
      registers,
    });
  }

  /** The observer for the backing resource at `path`. */
  readonly forResource: FenceObservers = (path) => {
    const resource = groupResourceOf(path);
    this.probes.inc({ resource }, 0);
    for (const result of results) this.fences.inc({ resource, result }, 0);
    return {
      probeSent: () => {
        this.probes.inc({ resource });
      },
      fenced: (result) => {
        this.fences.inc({ resource, result });
      },
    };
  };
}

/**
 * `<resource>.<group>` (kube's GroupResource.String()) of a collection
 * path: `/apis/<group>/<version>[/namespaces/<ns>]/<resource>` or
 * `/api/v1[/namespaces/<ns>]/<resource>`, the core group leaving `<resource>`.
 */
export function groupResourceOf(path: string): string {
  const segments = path.split('/').filter((segment) => segment !== '');
  const resource = segments.at(-1) ?? '';
  return segments[0] === 'apis' && segments[1] !== undefined ? `${resource}.${segments[1]}` : resource;
}
