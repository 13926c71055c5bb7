/**
 * kube's NamespaceLifecycle admission for the record store's creates:
 * nothing is created in a namespace that does not exist or is being
 * deleted, or its record would outlive it. As kube's plugin, it reads the
 * namespaces' shared cache and asks kube-apiserver only when the cache does
 * not have the namespace (created a moment ago, or the cache not synced yet).
 */
import { pathSegmentNameErrors } from '../api/request-info.js';
import { goQuote } from '../api/go-strings.js';
import { ApiError, internalError, notFound, type GroupResource } from '../api/status.js';
import type { KubeObject } from './informer.js';
import { isNotFound, type KubeClient } from './kube-client.js';
import type { BackingResource, SharedInformerFactory } from './shared-informers.js';

/** What admission reads of a Namespace. */
interface NamespacePhase extends KubeObject {
  readonly status?: { readonly phase?: string };
}

export class NamespaceLifecycle {
  constructor(
    private readonly client: KubeClient,
    private readonly informers: SharedInformerFactory,
    /** The namespaces' shared cache. */
    private readonly namespaces: BackingResource,
    /** The resource whose object is being created, as the refusal names it. */
    private readonly gr: GroupResource,
    /** How a failed read of the namespace is answered (translated as any backing error of the write). */
    private readonly backingError: (error: unknown, namespace: string) => unknown,
  ) {}

  /** Throws 403 (NamespaceTerminating) or 404 (no such namespace) as kube-apiserver does. */
  async admit(namespace: string, name: string): Promise<void> {
    const phase = this.cachedPhase(namespace) ?? (await this.phase(namespace));
    if (phase !== 'Terminating') return;
    const { group, resource } = this.gr;
    const subject = name === '' ? `${resource}.${group}` : `${resource}.${group} "${name}"`;
    throw new ApiError(403, 'Forbidden', `${subject} is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, {
      ...(name === '' ? {} : { name }),
      group,
      kind: resource,
      causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
    });
  }

  /** The cached namespace's phase ('' when it has none); undefined when the cache cannot tell. */
  private cachedPhase(namespace: string): string | undefined {
    const cache = this.informers.informerFor<NamespacePhase>(this.namespaces);
    if (!cache.isHealthy()) return undefined;
    const cached = cache.get(undefined, namespace);
    return cached === undefined ? undefined : (cached.status?.phase ?? '');
  }

  /** The namespace read from kube-apiserver, as kube's plugin reads it with client-go (which refuses a name that is no path segment). */
  private async phase(namespace: string): Promise<string | undefined> {
    const invalid = pathSegmentNameErrors(namespace);
    if (invalid.length > 0) throw internalError(`invalid resource name ${goQuote(namespace)}: [${invalid.join(' ')}]`);
    try {
      return (await this.client.get<NamespacePhase>(`/api/v1/namespaces/${encodeURIComponent(namespace)}`)).status?.phase;
    } catch (error) {
      if (isNotFound(error)) throw notFound({ group: '', resource: 'namespaces' }, namespace);
      throw this.backingError(error, namespace);
    }
  }
}
