/**
 * The parts of baremetal-operator's `metal3.io/v1alpha1` objects this server
 * reads and writes, as plain JSON shapes (field names as in BMO's Go types).
 * Only the fields we use are typed; everything else passes through untouched
 * because writes send back the object as read.
 */

import type { ObjectMeta } from '../api/rest/types.js';
import type { KubeObject } from '../backing/informer.js';
import { withoutManagedFields, type BackingResource } from '../backing/shared-informers.js';

export const metal3GroupVersion = 'metal3.io/v1alpha1';

/** Object metadata as the API layer types it, with the name always present. */
export type Metadata = Omit<ObjectMeta, 'name'> & { name: string };

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
}

export interface SecretReference {
  name?: string;
  namespace?: string;
}

export interface Image {
  url?: string;
  checksum?: string;
  checksumType?: string;
  format?: string;
  ociAuthSecretName?: string;
}

export interface CustomDeploy {
  method?: string;
}

export interface BareMetalHostSpec {
  online?: boolean;
  consumerRef?: ObjectReference | null;
  image?: Image | null;
  customDeploy?: CustomDeploy | null;
  userData?: SecretReference | null;
  networkData?: SecretReference | null;
  metaData?: SecretReference | null;
  disablePowerOff?: boolean;
  [field: string]: unknown;
}

export interface BareMetalHostStatus {
  operationalStatus?: string;
  errorType?: string;
  errorMessage?: string;
  poweredOn?: boolean;
  provisioning?: { state?: string; [field: string]: unknown };
  hardware?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface BareMetalHost {
  apiVersion?: string;
  kind?: string;
  metadata: Metadata;
  spec: BareMetalHostSpec;
  status?: BareMetalHostStatus;
}

export interface NameValuePair {
  name: string;
  value?: string;
}

export interface HostClaimNamespaces {
  names?: string[];
  nameMatches?: string;
  hasLabels?: NameValuePair[];
}

export interface HostDeployPolicy {
  metadata: Metadata;
  spec?: { hostClaimNamespaces?: HostClaimNamespaces | null };
}

export interface Namespace {
  metadata: Metadata;
}

/** Collection paths for the objects above, across all namespaces. */
export const metal3Paths = {
  bareMetalHosts: '/apis/metal3.io/v1alpha1/baremetalhosts',
  hostDeployPolicies: '/apis/metal3.io/v1alpha1/hostdeploypolicies',
  namespaces: '/api/v1/namespaces',
  bareMetalHost: (namespace: string, name: string): string =>
    `/apis/metal3.io/v1alpha1/namespaces/${namespace}/baremetalhosts/${name}`,
} as const;

/**
 * Host annotations that copy the host's spec or status: never shown
 * (HardwareData's admin form leaves them out, as they may quote the BMC) and
 * read by nobody, so the shared cache does not keep them.
 */
export const hostCopyAnnotations: ReadonlySet<string> = new Set(['kubectl.kubernetes.io/last-applied-configuration', 'baremetalhost.metal3.io/status']);

/** What the shared cache keeps of a host: all but managedFields and the annotations that copy it. */
function cachedHost(object: KubeObject): KubeObject {
  const host = withoutManagedFields(object as BareMetalHost);
  const annotations = host.metadata.annotations;
  if (annotations === undefined || !Object.keys(annotations).some((key) => hostCopyAnnotations.has(key))) return host;
  const kept = Object.fromEntries(Object.entries(annotations).filter(([key]) => !hostCopyAnnotations.has(key)));
  const cached: BareMetalHost = { ...host, metadata: { ...host.metadata, annotations: kept } };
  return cached;
}

/** The shared caches of these resources; baremetal-operator's CRDs may be absent. */
export const metal3Resources = {
  bareMetalHosts: { path: metal3Paths.bareMetalHosts, optional: true, transform: cachedHost },
  hostDeployPolicies: { path: metal3Paths.hostDeployPolicies, optional: true, transform: withoutManagedFields },
  namespaces: { path: metal3Paths.namespaces, transform: withoutManagedFields },
} as const satisfies Record<string, BackingResource>;

/** Annotations and labels BMO and CAPM3 define on hosts (exact keys). */
export const hostKeys = {
  paused: 'baremetalhost.metal3.io/paused',
  detached: 'baremetalhost.metal3.io/detached',
  unhealthy: 'capi.metal3.io/unhealthy',
  reboot: 'reboot.metal3.io',
  rebootPrefix: 'reboot.metal3.io/',
  nodeReuse: 'infrastructure.cluster.x-k8s.io/node-reuse',
  failureDomain: 'infrastructure.cluster.x-k8s.io/failure-domain',
} as const;

export function provisioningState(host: BareMetalHost): string {
  return host.status?.provisioning?.state ?? '';
}
