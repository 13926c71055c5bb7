/**
 * The confused-deputy guard. The binder copies the Secrets a claim names
 * into the host's namespace with the server's own identity; so that it can
 * never boot a machine with a Secret the tenant could not read, every write
 * of a claim is refused unless the requesting user may `get` each Secret it
 * references (a SubjectAccessReview for the real user, as kube-apiserver
 * itself would authorize a read of that Secret).
 */
import { forbiddenMessage, type Attributes, type Authorizer } from '../../auth/authorizer.js';
import type { AdmissionRequest } from '../../api/rest/contracts.js';
import { forbidden } from '../../api/status.js';
import { secretReferences } from '../../tenancy/secret-references.js';

export function secretAccessAdmission(authorizer: Authorizer): (request: AdmissionRequest) => Promise<void> {
  return async ({ user, namespace, object }) => {
    const spec = object['spec'];
    const references = typeof spec === 'object' && spec !== null ? secretReferences(spec) : {};
    for (const name of new Set(Object.values(references))) {
      const attributes: Attributes = { kind: 'resource', verb: 'get', group: '', version: 'v1', resource: 'secrets', subresource: '', namespace, name };
      const decision = await authorizer.authorize(user, attributes);
      if (!decision.allowed) throw forbidden({ group: '', resource: 'secrets' }, name, forbiddenMessage(user.name, attributes));
    }
  };
}
