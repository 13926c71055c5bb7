/**
 * Continue tokens of paginated HardwareData lists, in the shape of
 * kube-apiserver's (k8s.io/apiserver pkg/storage/continue.go: base64url JSON
 * with a version, the list's resourceVersion and where the next page
 * starts), bound to the list they were issued for (namespace, label and
 * field selectors): a token replayed against another list is kube's 400.
 * Sealed as HostClaim tokens are (backing/sealed-token.ts: a JWE, `dir`
 * A256GCM, with the key every replica shares), so a token is opaque,
 * tamper-evident, and continues on any replica.
 */
import { invalidContinueToken as invalidToken, listDigest as digestOf, TokenSealer } from '../../backing/sealed-token.js';
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

/** Seals and opens HardwareData continue tokens with the replicas' shared key. */
export class HardwareDataTokens {
  private readonly sealer: TokenSealer;

  /** `key`: 32 bytes, resolved once the shared key is loaded. */
  constructor(key: Promise<Uint8Array>) {
    this.sealer = new TokenSealer(key);
  }

  async encode(point: ContinuePoint, list: ListIdentity): Promise<string> {
    const token: Token = { v: tokenVersion, rv: point.resourceVersion.toString(), list: listDigest(list), after: point.after };
    return this.sealer.seal(token);
  }

  /** Where the next page starts; a token that is not ours, was changed, or is for another list, is kube's 400. */
  async decode(text: string, list: ListIdentity): Promise<ContinuePoint> {
    return pointOf(await this.sealer.open(text), list);
  }
}

function pointOf(decoded: unknown, list: ListIdentity): ContinuePoint {
  if (typeof decoded !== 'object' || decoded === null) throw invalidToken('continue key is not valid');
  const token = decoded as Partial<Token>;
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

function listDigest(list: ListIdentity): string {
  return digestOf([list.namespace, list.labelSelector, list.fieldSelector]);
}
