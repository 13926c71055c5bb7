/**
 * The key every replica seals continue tokens with (continue-token.ts): a
 * page served by one replica must be continued by any other, so the key
 * cannot be per process. It lives in a Secret in the storage namespace,
 * created by whichever replica finds it missing first (a create race is
 * settled by kube-apiserver: the loser reads the winner's key). Tenants
 * have no access to the storage namespace.
 */
import { randomBytes } from 'node:crypto';
import { isConflict, isNotFound, type KubeClient } from './kube-client.js';

export const continueTokenKeySecret = 'hostclaim-apiserver-continue-token-key';
const keyBytes = 32;

interface Secret {
  readonly data?: Readonly<Record<string, string>>;
}

/** Reads the shared key, creating the Secret when absent; rejects on any other failure (the caller retries). */
export async function loadContinueTokenKey(client: Pick<KubeClient, 'get' | 'create'>, namespace: string): Promise<Uint8Array> {
  const path = `/api/v1/namespaces/${namespace}/secrets`;
  const existing = await readSecret(client, `${path}/${continueTokenKeySecret}`);
  if (existing !== undefined) return keyOf(existing);
  try {
    return keyOf(
      await client.create<Secret>(path, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: continueTokenKeySecret, labels: { 'app.kubernetes.io/name': 'hostclaim-apiserver' } },
        type: 'Opaque',
        data: { key: randomBytes(keyBytes).toString('base64') },
      }),
    );
  } catch (error) {
    if (!isConflict(error)) throw error;
    const created = await readSecret(client, `${path}/${continueTokenKeySecret}`);
    if (created === undefined) throw error;
    return keyOf(created);
  }
}

async function readSecret(client: Pick<KubeClient, 'get'>, path: string): Promise<Secret | undefined> {
  try {
    return await client.get<Secret>(path);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

function keyOf(secret: Secret): Uint8Array {
  const key = Buffer.from(secret.data?.['key'] ?? '', 'base64');
  if (key.length !== keyBytes) throw new Error(`Secret ${continueTokenKeySecret}: data.key must hold ${keyBytes} bytes`);
  return new Uint8Array(key);
}
