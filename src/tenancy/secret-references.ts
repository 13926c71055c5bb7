/**
 * The Secrets a HostClaim references, by the field that names them: the one
 * definition the API's access check and the binder's copies both use.
 */

import { dnsSubdomainErrors } from '../api/label-validation.js';

export type SecretField = 'userData' | 'networkData' | 'metaData' | 'ociAuth';

/** Where each reference is in a claim's spec, as validation errors name it. */
export const secretFieldPaths: Readonly<Record<SecretField, string>> = {
  userData: 'spec.userData.name',
  networkData: 'spec.networkData.name',
  metaData: 'spec.metaData.name',
  ociAuth: 'spec.image.ociAuthSecretName',
};

/**
 * Why `name` cannot name a Secret (kube's rule for Secret names: a DNS
 * subdomain); empty when it can. A `/` or dot segment in a name the binder
 * reads with its own identity would reach another namespace's Secret.
 */
export function secretNameErrors(name: string): string[] {
  return dnsSubdomainErrors(name);
}

interface ReferencingSpec {
  readonly userData?: { readonly name?: unknown } | null;
  readonly networkData?: { readonly name?: unknown } | null;
  readonly metaData?: { readonly name?: unknown } | null;
  readonly image?: { readonly ociAuthSecretName?: unknown } | null;
}

/** Names of the referenced Secrets (in the claim's own namespace: validation forbids any other). */
export function secretReferences(spec: ReferencingSpec): Partial<Record<SecretField, string>> {
  const names: Partial<Record<SecretField, string>> = {};
  const set = (field: SecretField, name: unknown): void => {
    if (typeof name === 'string' && name !== '') names[field] = name;
  };
  set('userData', spec.userData?.name);
  set('networkData', spec.networkData?.name);
  set('metaData', spec.metaData?.name);
  set('ociAuth', spec.image?.ociAuthSecretName);
  return names;
}
