/**
 * The sealing every continue token this server issues shares: a JWE
 * (`dir`, A256GCM; jose) with the key every replica shares (token-key.ts),
 * so a token is opaque to clients, tamper-evident, and opens on any replica.
 * What a token holds, and the checks on it, are each list's own
 * (continue-token.ts for HostClaims, resources/hardwaredata for HardwareData);
 * the refusal is always kube's 400 `invalid continue token: …`.
 */
import { createHash } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { badRequest, type ApiError } from '../api/status.js';

export class TokenSealer {
  /** `key`: 32 bytes, resolved once the shared key is loaded (sealing and opening wait for it). */
  constructor(private readonly key: Promise<Uint8Array>) {}

  async seal(payload: object): Promise<string> {
    return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(await this.key);
  }

  /** The sealed payload, parsed; a token that is not ours or was changed is kube's 400. */
  async open(token: string): Promise<unknown> {
    const key = await this.key;
    let plaintext: Uint8Array;
    try {
      plaintext = (await compactDecrypt(token, key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] })).plaintext;
    } catch {
      throw invalidContinueToken('continue key is not valid');
    }
    return parseJson(new TextDecoder().decode(plaintext));
  }
}

export function invalidContinueToken(detail: string): ApiError {
  return badRequest(`invalid continue token: ${detail}`);
}

/** A short digest of what a list is about (namespace, selectors), binding a token to it. */
export function listDigest(parts: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
