/**
 * The authorizer of the request pipeline with the per-namespace read rule
 * (namespace-access.ts) for namespaced lists and watches of the served
 * resources. There the delegating authorizer cannot be asked alone: the
 * opt-in cluster-wide-reads grant, a ClusterRoleBinding, allows list and
 * watch in every namespace as far as kube's RBAC is concerned, and must
 * widen nothing. Everything else (get, writes, subresources, a list or
 * watch of all namespaces, which the grant exists to let through and which
 * the REST layer then narrows) is the delegating authorizer's, unchanged.
 */
import type { Attributes, Decision } from './authorizer.js';
import type { NamespaceAccessCache } from './namespace-access.js';
import type { UserInfo } from '../api/user.js';

export interface PipelineAuthorizer {
  authorize(user: UserInfo, attributes: Attributes): Promise<Decision>;
}

export class ScopedReadAuthorizer implements PipelineAuthorizer {
  private readonly scoped: ReadonlySet<string>;

  /** `resources`: `<group>/<resource>` of the served resources. */
  constructor(
    private readonly delegate: PipelineAuthorizer,
    private readonly access: Pick<NamespaceAccessCache, 'allowsNamespace'>,
    resources: readonly { readonly group: string; readonly resource: string }[],
  ) {
    this.scoped = new Set(resources.map((gr) => `${gr.group}/${gr.resource}`));
  }

  authorize(user: UserInfo, attributes: Attributes): Promise<Decision> {
    if (
      attributes.kind === 'resource' &&
      (attributes.verb === 'list' || attributes.verb === 'watch') &&
      attributes.namespace !== '' &&
      attributes.subresource === '' &&
      this.scoped.has(`${attributes.group}/${attributes.resource}`)
    ) {
      return this.access.allowsNamespace(user, attributes);
    }
    return this.delegate.authorize(user, attributes);
  }
}
