/**
 * The last checks before a write is committed. Every other check runs in
 * kube-apiserver's order (k8s.io/apiserver handlers create.go, update.go,
 * patch.go, delete.go); these two are where this server must differ in
 * *when*, never in *whether*:
 *
 * - The response must be encodable. kube converts the response
 *   (PartialObjectMetadata kind, Table options) after the write and fails
 *   there, so a refused request would have changed something.
 * - No write upgrades a connection. kube-aggregator (handler_proxy.go)
 *   proxies a request whose `Connection` header names `upgrade`
 *   (httpstream.IsUpgradeRequest) as an upgrade, and upgradeaware.go turns
 *   any backend answer below 400 that is not a 101 into its own plain-text
 *   503 "invalid upgrade response": a write served normally would be
 *   committed and reported as failed. An answer of 400 or more is passed
 *   through unchanged, so the write is refused with a 400 instead. kube
 *   serving a CRD ignores the header and would have written.
 *
 * The checks wrap the store, the one place every write passes, and run only
 * after what storage answers first: a create of an existing name is kube's
 * 409, a delete of a missing object its 404.
 */
import { ApiError, alreadyExists, badRequest } from '../status.js';
import type { WriteCall } from './contracts.js';
import { checkWriteOutput } from './representation.js';
import type { WritableStore } from './store.js';
import type { ApiObject } from './types.js';

/** The call with a store that refuses to commit what the checks refuse. */
export function guardCommits(call: WriteCall): WriteCall {
  const store = call.resource.store;
  const outputRefusal = (): ApiError | undefined => {
    try {
      checkWriteOutput(call.req, call.info.verb === 'deletecollection' ? 'list' : 'object');
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
    return undefined;
  };
  const refusal = (): ApiError | undefined => outputRefusal() ?? upgradeRefusal(call);
  const guarded: WritableStore = {
    hub: store.hub,
    get: (namespace, name, resourceVersion) => store.get(namespace, name, resourceVersion),
    list: (namespace, query) => store.list(namespace, query),
    async create(namespace, object, query) {
      const refused = refusal();
      if (refused !== undefined) {
        if (await exists(store, namespace, object)) throw alreadyExists(call.gr, object.metadata.name ?? '');
        throw refused;
      }
      return store.create(namespace, object, query);
    },
    async update(namespace, object, subresource, query) {
      const refused = refusal();
      if (refused !== undefined) throw refused;
      return store.update(namespace, object, subresource, query);
    },
    async apply(namespace, name, configuration, subresource, query) {
      const refused = refusal();
      if (refused !== undefined) throw refused;
      return store.apply(namespace, name, configuration, subresource, query);
    },
    async delete(namespace, name, options) {
      const output = outputRefusal();
      const upgrade = upgradeRefusal(call);
      if (output !== undefined || upgrade !== undefined) {
        const current = await store.get(namespace, name, undefined);
        // An immediate deletion answers with a Status, which kube never converts: only an object left pending, or a list, is.
        const converted = call.info.verb === 'deletecollection' || (current.metadata.finalizers ?? []).length > 0;
        if (converted && output !== undefined) throw output;
        if (upgrade !== undefined) throw upgrade;
      }
      return store.delete(namespace, name, options);
    },
  };
  return { ...call, resource: { ...call.resource, store: guarded } };
}

function upgradeRefusal(call: WriteCall): ApiError | undefined {
  const connection = call.req.headers.connection ?? '';
  if (!connection.toLowerCase().includes('upgrade')) return undefined;
  return badRequest(`connection upgrade is not supported for ${call.info.verb} requests on ${call.gr.resource}.${call.gr.group}`);
}

async function exists(store: WritableStore, namespace: string, object: ApiObject): Promise<boolean> {
  const name = object.metadata.name ?? '';
  if (name === '') return false;
  try {
    await store.get(namespace, name, undefined);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === 404) return false;
    throw error;
  }
}
