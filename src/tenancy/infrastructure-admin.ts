/**
 * Who is an infrastructure admin of a host namespace: a requester who may
 * `get` BareMetalHosts there (a namespace-wide SubjectAccessReview, cached
 * by the authorizer). Such a requester already reads the hosts themselves,
 * so showing them more of what is derived from the hosts (a claim's raw
 * host error, a HardwareData's host labels) reveals nothing new.
 */
import type { Attributes, Authorizer } from '../auth/authorizer.js';
import type { UserInfo } from '../api/user.js';

export function infrastructureAdminAccess(authorizer: Authorizer): (user: UserInfo, namespace: string) => Promise<boolean> {
  return async (user, namespace) => {
    const attributes: Attributes = {
      kind: 'resource',
      verb: 'get',
      group: 'metal3.io',
      version: 'v1alpha1',
      resource: 'baremetalhosts',
      subresource: '',
      namespace,
      name: '',
    };
    return (await authorizer.authorize(user, attributes)).allowed;
  };
}
