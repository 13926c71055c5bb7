/**
 * What an infrastructure admin (who may `get` the BareMetalHost) sees of a
 * HardwareData beyond the tenant form: every label and annotation of the
 * host and the whole inventory (inventory.ts lists what tenants see by
 * default). Never anything that quotes the BMC: annotations that copy the
 * host's spec or status (`kubectl.kubernetes.io/last-applied-configuration`,
 * `baremetalhost.metal3.io/status`) and any label or annotation whose value
 * contains the BMC address or credentials name are left out
 * (tenancy/bmc-details.ts).
 */
import type { ResourceProjection } from '../../api/rest/projection.js';
import type { ApiObject } from '../../api/rest/types.js';
import type { UserInfo } from '../../api/user.js';
import { hostCopyAnnotations, type BareMetalHost } from '../../metal3/types.js';
import { revealsBmcDetails } from '../../tenancy/bmc-details.js';
import { sourceOf } from './projection.js';

export function hardwareDataProjection(infrastructureAccess: (user: UserInfo, namespace: string) => Promise<boolean>): ResourceProjection {
  return {
    infrastructureNamespace: (object) => sourceOf(object)?.host.metadata.namespace,
    forInfrastructureAdmin,
    infrastructureAccess,
  };
}

const adminForms = new WeakMap<ApiObject, ApiObject>();

function forInfrastructureAdmin(object: ApiObject): ApiObject {
  const source = sourceOf(object);
  if (source === undefined) return object;
  let admin = adminForms.get(object);
  if (admin === undefined) {
    const { host, inventory } = source;
    const labels = hostMap(host, host.metadata.labels, () => true);
    // The object's own annotations (the boot MAC) win over a host annotation of the same key.
    const annotations = { ...hostMap(host, host.metadata.annotations, (key) => !hostCopyAnnotations.has(key)), ...object.metadata.annotations };
    const { labels: _tenantLabels, annotations: _tenantAnnotations, ...metadata } = object.metadata;
    admin = {
      ...object,
      metadata: {
        ...metadata,
        ...(Object.keys(labels).length === 0 ? {} : { labels }),
        ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
      },
      spec: inventory,
    };
    adminForms.set(object, admin);
  }
  return admin;
}

/** The host's entries that pass `keep` and quote nothing of the BMC, sorted by key (equal sets serialize identically). */
function hostMap(host: BareMetalHost, map: Readonly<Record<string, string>> | undefined, keep: (key: string) => boolean): Record<string, string> {
  return Object.fromEntries(
    Object.entries(map ?? {})
      .filter(([key, value]) => keep(key) && !revealsBmcDetails(value, host) && !revealsBmcDetails(key, host))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}
