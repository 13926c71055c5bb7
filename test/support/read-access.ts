/** A ReadAccess under which every requester may read every namespace: for tests of the REST layer that are not about scoping. */
import type { ReadAccess } from '../../src/api/rest/namespace-scope.js';

export const everyNamespace: ReadAccess = {
  namespaces: () => Promise.resolve('all'),
  subscribe: () => () => undefined,
};
