/**
 * What a bound host should look like for its claim, what it must look
 * like to be given back, and the patch that binds it. Pure functions: they
 * return a new host object (or patch), and the binder writes it only when it
 * differs from the one read (with that object's resourceVersion as
 * precondition).
 *
 * Annotations forwarded from the claim (reboot requests, detaching) are
 * listed on the host itself, in the same write that sets them, so the
 * binder only ever removes what it put there, even after a crash between
 * two of its writes.
 */
import { hostKeys, type BareMetalHost, type SecretReference } from '../../metal3/types.js';
import { recordConsumerRef } from '../../tenancy/host-references.js';
import type { SecretField } from '../../tenancy/secret-references.js';
import type { Claim } from './claim.js';

/** Annotation on a host: JSON map of the annotations the binder forwarded to it. */
export const forwardedAnnotation = 'binding.infra.tenancy.metal3.io/forwarded';

/** Names of the Secret copies in the host's namespace, by the claim field they serve. */
export type SecretCopies = Readonly<Partial<Record<SecretField, string>>>;

export interface WorkloadOptions {
  /** Whether an admitting HostDeployPolicy lets the tenant detach the host. */
  readonly detachAllowed: boolean;
}

export function withWorkload(host: BareMetalHost, claim: Claim, copies: SecretCopies, options: WorkloadOptions): BareMetalHost {
  const next = structuredClone(host);
  const hostNamespace = host.metadata.namespace ?? '';
  const reference = (name: string | undefined): SecretReference | null => (name === undefined ? null : { name, namespace: hostNamespace });
  next.spec.online = claim.spec.poweredOn ?? false;
  next.spec.image = desiredImage(host, claim, copies);
  next.spec.customDeploy = claim.spec.customDeploy ?? null;
  next.spec.userData = reference(copies.userData);
  next.spec.networkData = reference(copies.networkData);
  next.spec.metaData = reference(copies.metaData);
  forward(next, forwardableAnnotations(claim, options));
  return dropNulls(next);
}

/**
 * The spec that makes BMO deprovision the host (image, custom deploy and
 * data cleared; powered off unless the admin disabled power-off), with the
 * node-reuse label when the claim named a pool. consumerRef stays: it is
 * cleared only once deprovisioning has started.
 */
export function withoutWorkload(host: BareMetalHost, nodeReuse: string | undefined): BareMetalHost {
  const next = structuredClone(host);
  next.spec.online = host.spec.disablePowerOff === true;
  next.spec.image = null;
  next.spec.customDeploy = null;
  next.spec.userData = null;
  next.spec.networkData = null;
  next.spec.metaData = null;
  forward(next, {});
  if (nodeReuse !== undefined) next.metadata.labels = { ...next.metadata.labels, [hostKeys.nodeReuse]: nodeReuse };
  return dropNulls(next);
}

/**
 * The binding as a merge patch of the host: its consumerRef, the node-reuse
 * mark consumed (only a claim of the pool it marks may be binding it), and
 * the resourceVersion judged. A patch rather than the whole object: the
 * cached host lacks fields the cache leaves out (managedFields, annotations
 * copying the host), which a PUT would remove.
 */
export function bindingPatch(host: BareMetalHost, claim: Claim): object {
  // Without it the patch would apply to whatever the host is now.
  if (host.metadata.resourceVersion === undefined || host.metadata.resourceVersion === '') throw new Error(`host ${host.metadata.namespace ?? ''}/${host.metadata.name} has no resourceVersion`);
  const consumesMark = hostKeys.nodeReuse in (host.metadata.labels ?? {});
  return {
    metadata: { resourceVersion: host.metadata.resourceVersion, ...(consumesMark ? { labels: { [hostKeys.nodeReuse]: null } } : {}) },
    spec: { consumerRef: recordConsumerRef(claim.identity) },
  };
}

/** The annotations currently forwarded to a host by the binder. */
export function forwardedTo(host: BareMetalHost): Record<string, string> {
  const text = host.metadata.annotations?.[forwardedAnnotation];
  if (text === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return {};
  }
}

/**
 * A forwarded plain `reboot.metal3.io` that BMO has since removed from the
 * host: the reboot happened, so the request is cleared on the claim.
 */
export function rebootHandled(host: BareMetalHost, claim: Claim): boolean {
  return hostKeys.reboot in forwardedTo(host) && !(hostKeys.reboot in (host.metadata.annotations ?? {})) && hostKeys.reboot in claim.annotations;
}

/** The claim's annotations the host should carry: reboot requests always, detaching only where the admins allow it. */
function forwardableAnnotations(claim: Claim, options: WorkloadOptions): Record<string, string> {
  return Object.fromEntries(
    Object.entries(claim.annotations).filter(
      ([key]) => key === hostKeys.reboot || key.startsWith(hostKeys.rebootPrefix) || (key === hostKeys.detached && options.detachAllowed),
    ),
  );
}

/**
 * Sets the desired forwarded annotations and removes the ones forwarded
 * before and no longer wanted. A handled plain reboot (already removed from
 * the host by BMO) is not forwarded again.
 */
function forward(host: BareMetalHost, desired: Record<string, string>): void {
  const previously = forwardedTo(host);
  const current = host.metadata.annotations ?? {};
  const annotations = { ...current };
  for (const key of Object.keys(previously)) if (!(key in desired)) Reflect.deleteProperty(annotations, key);
  // A key someone else already set on the host (an admin's reboot hold) is never taken over.
  const recorded = Object.fromEntries(Object.entries(desired).filter(([key]) => key in previously || !(key in current)));
  const onHost = { ...recorded };
  if (hostKeys.reboot in previously && !(hostKeys.reboot in current)) Reflect.deleteProperty(onHost, hostKeys.reboot);
  Object.assign(annotations, onHost);
  if (Object.keys(recorded).length === 0) Reflect.deleteProperty(annotations, forwardedAnnotation);
  else annotations[forwardedAnnotation] = JSON.stringify(recorded);
  // kube drops an empty map: writing one would be a change that never shows.
  if (Object.keys(annotations).length === 0) Reflect.deleteProperty(host.metadata, 'annotations');
  else host.metadata.annotations = annotations;
}

/**
 * BMO provisions an image only onto a host without one, and ignores a
 * changed URL on a provisioned host; so the claim's image is set when the
 * host has none, cleared when the claim has none (deprovisioning, binding
 * kept), and otherwise left as deployed.
 */
function desiredImage(host: BareMetalHost, claim: Claim, copies: SecretCopies): BareMetalHost['spec']['image'] {
  const wanted = claim.spec.image;
  if (wanted === undefined || wanted === null || (wanted.url ?? '') === '') return null;
  const image = { ...wanted };
  if (copies.ociAuth === undefined) Reflect.deleteProperty(image, 'ociAuthSecretName');
  else image.ociAuthSecretName = copies.ociAuth;
  const current = host.spec.image;
  if (current !== undefined && current !== null && (current.url ?? '') !== '' && current.url !== image.url) return current;
  return image;
}

function dropNulls(host: BareMetalHost): BareMetalHost {
  for (const field of ['image', 'customDeploy', 'userData', 'networkData', 'metaData'] as const) {
    if (host.spec[field] === null) Reflect.deleteProperty(host.spec, field);
  }
  return host;
}
