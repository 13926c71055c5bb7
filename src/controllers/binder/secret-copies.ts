/**
 * Copies of the tenant's Secrets (user data, network data, metadata, OCI
 * registry credentials) in the host's namespace, where BMO reads them: BMO
 * resolves a host's Secret references in the host's own namespace only.
 *
 * Copies have deterministic names derived from the claim's record and carry
 * the record's uid as a label; that label, not an ownerReference, ties them
 * to the claim (an owner in another namespace is invalid for the garbage
 * collector, which would delete the copy). The binder deletes them on
 * release. The tenant's right to read each source Secret was checked when
 * the claim was written (SubjectAccessReview), so the copy never carries a
 * Secret the tenant could not read itself.
 */
import { createHash } from 'node:crypto';
import { isNotFound, type KubeClient } from '../../backing/kube-client.js';
import type { ObjectMeta } from '../../api/rest/types.js';
import { sameJson } from '../../backing/json.js';
import { secretNameErrors, secretReferences, type SecretField } from '../../tenancy/secret-references.js';
import type { Claim } from './claim.js';
import type { SecretCopies } from './host-spec.js';

export const copyOwnerLabel = 'infra.tenancy.metal3.io/claim-record-uid';
/** On a copy: `<uid>/<resourceVersion>` of the source Secret it was written from. */
export const copySourceAnnotation = 'infra.tenancy.metal3.io/copy-of';

interface Secret {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta & { name: string };
  type?: string;
  data?: Record<string, string>;
}

interface SecretList {
  items: Secret[];
}

/** The claim fields that reference Secrets, the suffix of their copy, and the reason upstream uses when one fails. */
const referencedSecrets = [
  { field: 'userData', suffix: 'userdata', failure: 'UserDataSecretSyncFailure' },
  { field: 'networkData', suffix: 'networkdata', failure: 'NetworkDataSecretSyncFailure' },
  { field: 'metaData', suffix: 'metadata', failure: 'MetaDataSecretSyncFailure' },
  { field: 'ociAuth', suffix: 'ociauth', failure: 'OCIAuthSecretSyncFailure' },
] as const;

/** What the binder's Secret cache (metadata only) shows. */
export interface CachedSecrets {
  /** The names of the claim's copies in the host's namespace. */
  readonly copies: readonly string[];
  get(namespace: string, name: string): { readonly metadata: ObjectMeta } | undefined;
}

export interface CopyResult {
  readonly copies: SecretCopies;
  readonly problem?: { readonly reason: string; readonly message: string };
}

const maxNameLength = 253;

export function copyName(recordName: string, suffix: string): string {
  const readable = `${recordName}-${suffix}`;
  if (readable.length <= maxNameLength) return readable;
  return `h-${createHash('sha256').update(recordName).digest('hex').slice(0, 40)}-${suffix}`;
}

/** The names of the copies the claim's references call for (in its host's namespace). */
export function wantedCopyNames(claim: Claim): Set<string> {
  const names = secretReferences(claim.spec);
  return new Set(referencedSecrets.filter(({ field }) => names[field] !== undefined).map(({ suffix }) => copyName(claim.identity.name, suffix)));
}

/**
 * Brings the copies in `hostNamespace` in line with the claim's references;
 * removes the claim's copies no longer referenced, as the binder's Secret
 * cache shows them. A copy the cache does not show yet is not missed: its
 * arrival in the cache queues the claim again when it is not wanted
 * (Binder.onSecretChange). A copy the cache shows written from the source
 * version the cache shows is left alone without reading either: a newer
 * source version is an event that queues the claim again
 * (Binder.onSecretChange), and its reconcile copies it.
 */
export async function syncSecretCopies(client: KubeClient, claim: Claim, hostNamespace: string, cached: CachedSecrets): Promise<CopyResult> {
  const names = secretReferences(claim.spec);
  const copies: Partial<Record<SecretField, string>> = {};
  let problem: CopyResult['problem'];
  for (const { field, suffix, failure } of referencedSecrets) {
    const sourceName = names[field];
    if (sourceName === undefined) continue;
    const name = copyName(claim.identity.name, suffix);
    if (copyIsCurrent(cached.get(hostNamespace, name), cached.get(claim.namespace, sourceName), claim.identity.uid)) {
      copies[field] = name;
      continue;
    }
    // A name no Secret can have is never requested: it could climb out of the claim's namespace.
    const source = secretNameErrors(sourceName).length > 0 ? undefined : await readSecret(client, claim.namespace, sourceName);
    if (source === undefined) {
      problem ??= { reason: failure, message: `Secret "${sourceName}" not found in namespace "${claim.namespace}".` };
      continue;
    }
    const version = sourceVersion(source);
    await writeCopy(client, source, {
      name,
      namespace: hostNamespace,
      labels: { [copyOwnerLabel]: claim.identity.uid },
      ...(version === undefined ? {} : { annotations: { [copySourceAnnotation]: version } }),
    });
    copies[field] = name;
  }
  const kept = new Set(Object.values(copies));
  await deleteCopies(
    client,
    hostNamespace,
    cached.copies.filter((name) => !kept.has(name)),
  );
  return { copies, ...(problem === undefined ? {} : { problem }) };
}

/** Whether the copy is the claim's and was written from this version of the source (both as cached). */
export function copyIsCurrent(copy: { readonly metadata: ObjectMeta } | undefined, source: { readonly metadata: ObjectMeta } | undefined, recordUid: string): boolean {
  const version = source === undefined ? undefined : sourceVersion(source);
  return version !== undefined && copy?.metadata.labels?.[copyOwnerLabel] === recordUid && copy.metadata.annotations?.[copySourceAnnotation] === version;
}

function sourceVersion(source: { readonly metadata: ObjectMeta }): string | undefined {
  const { uid, resourceVersion } = source.metadata;
  return uid === undefined || resourceVersion === undefined || resourceVersion === '' ? undefined : `${uid}/${resourceVersion}`;
}

/**
 * Deletes every copy of the claim's in a namespace, listed fresh from
 * kube-apiserver: on release, nothing may be left behind for a cache that
 * lags.
 */
export async function deleteSecretCopies(client: KubeClient, recordUid: string, namespace: string): Promise<void> {
  const list = await client.get<SecretList>(`/api/v1/namespaces/${namespace}/secrets`, { labelSelector: `${copyOwnerLabel}=${recordUid}` });
  await deleteCopies(
    client,
    namespace,
    list.items.map((secret) => secret.metadata.name),
  );
}

async function deleteCopies(client: KubeClient, namespace: string, names: readonly string[]): Promise<void> {
  for (const name of names) await ignoreNotFound(client.request('DELETE', `/api/v1/namespaces/${namespace}/secrets/${name}`));
}

async function readSecret(client: KubeClient, namespace: string, name: string): Promise<Secret | undefined> {
  try {
    return await client.get<Secret>(`/api/v1/namespaces/${namespace}/secrets/${name}`);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

async function writeCopy(client: KubeClient, source: Secret, metadata: Secret['metadata']): Promise<void> {
  const namespace = metadata.namespace ?? '';
  const existing = await readSecret(client, namespace, metadata.name);
  const wanted: Secret = { apiVersion: 'v1', kind: 'Secret', metadata, ...(source.type === undefined ? {} : { type: source.type }), data: source.data ?? {} };
  if (existing === undefined) {
    await client.create(`/api/v1/namespaces/${namespace}/secrets`, wanted);
    return;
  }
  if (existing.type !== source.type) {
    // A Secret's type is immutable: replace the copy.
    await ignoreNotFound(client.request('DELETE', `/api/v1/namespaces/${namespace}/secrets/${metadata.name}`));
    await client.create(`/api/v1/namespaces/${namespace}/secrets`, wanted);
    return;
  }
  const copyOf = metadata.annotations?.[copySourceAnnotation];
  if (
    sameJson(existing.data ?? {}, wanted.data) &&
    existing.metadata.labels?.[copyOwnerLabel] === metadata.labels?.[copyOwnerLabel] &&
    existing.metadata.annotations?.[copySourceAnnotation] === copyOf
  ) {
    return;
  }
  // BMO labels the Secrets it uses; keep its labels, replace the data.
  await client.request('PUT', `/api/v1/namespaces/${namespace}/secrets/${metadata.name}`, {
    body: {
      ...existing,
      metadata: { ...existing.metadata, labels: { ...existing.metadata.labels, ...metadata.labels }, annotations: { ...existing.metadata.annotations, ...metadata.annotations } },
      data: wanted.data,
    },
  });
}

async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
