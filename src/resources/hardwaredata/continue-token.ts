/**
 * Continue tokens of paginated HardwareData lists, in the shape of
 * kube-apiserver's (k8s.io/apiserver pkg/storage/continue.go: base64url JSON
 * with a version, the list's resourceVersion and where the next page
 * starts), bound to the list they were issued for (namespace, label and
 * field selectors, as backing/continue-token.ts binds HostClaim tokens): a
 * token replayed against another list is kube's 400. Unsigned: a crafted
 * token can only move the start of a list the requester may read anyway
 * (the generic layer still scopes and filters every item).
 */
import { createHash } from 'node:crypto';
import { badRequest } from '../../api/status.js';
import type { ObjectPosition } from './model.js';

const tokenVersion = 'hardwaredata.tenancy.metal3.io/v1';

export interface ListIdentity {
  /** '' for a list across all namespaces. */
  readonly namespace: string;
  readonly labelSelector: string;
  readonly fieldSelector: string;
}

export interface ContinuePoint {
  /** The resourceVersion of the list's first page. */
  readonly resourceVersion: bigint;
  readonly after: ObjectPosition;
}

interface Token {
  readonly v: string;
  readonly rv: string;
  readonly list: string;
  readonly after: { readonly namespace: string; readonly name: string };
}

export function encodeContinue(point: ContinuePoint, list: ListIdentity): string {
  const token: Token = { v: tokenVersion, rv: point.resourceVersion.toString(), list: listDigest(list), after: point.after };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

export function decodeContinue(text: string, list: ListIdentity): ContinuePoint {
  const token = decodeJson(text) as Partial<Token> | undefined;
  if (token === undefined) throw invalidToken('continue key is not valid');
  if (token.v !== tokenVersion) throw invalidToken('continue key is not valid: server does not recognize this encoded version');
  if (typeof token.rv !== 'string' || !/^[1-9][0-9]{0,19}$/.test(token.rv)) {
    throw invalidToken(`continue key is not valid: incorrect encoded start resourceVersion (version ${tokenVersion})`);
  }
  const after = token.after;
  if (typeof after?.namespace !== 'string' || typeof after.name !== 'string' || after.name === '') throw invalidToken('continue key is not valid');
  if (token.list !== listDigest(list) || (list.namespace !== '' && after.namespace !== list.namespace)) {
    throw invalidToken('continue key is not valid: it was issued for another list');
  }
  return { resourceVersion: BigInt(token.rv), after: { namespace: after.namespace, name: after.name } };
}

function invalidToken(detail: string): Error {
  return badRequest(`invalid continue token: ${detail}`);
}

function listDigest(list: ListIdentity): string {
  return createHash('sha256')
    .update(JSON.stringify([list.namespace, list.labelSelector, list.fieldSelector]))
    .digest('base64url')
    .slice(0, 16);
}

function decodeJson(token: string): unknown {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(token)) return undefined;
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
