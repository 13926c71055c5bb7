/**
 * Continue tokens of paginated lists, translated both ways between the
 * virtual resource and its records (k8s.io/apiserver/pkg/storage/continue.go).
 *
 * kube-apiserver's token is `{"v":"meta.k8s.io/v1","rv":N,"start":"/<key>\0"}`,
 * where the key is the last record's name (`<namespace>.<name>` or a
 * digest): handed to a tenant it would reveal the backing naming. The token
 * we issue names the last object by its virtual namespace and name instead,
 * and records what the list was about (namespace, label selector, name).
 * It is sealed (sealed-token.ts) with a key every replica shares, so it is
 * - opaque: a client cannot read it;
 * - tamper-evident: a token not issued by one of the replicas, or changed,
 *   is kube's 400 `invalid continue token`;
 * - bound to its list: a token is only accepted for the same namespace,
 *   label selector and name, so it cannot be replayed against another
 *   namespace's records (and every record query carries the namespace
 *   label anyway).
 */
import { internalError } from '../api/status.js';
import type { ApiObject } from '../api/rest/types.js';
import { pathSegmentNameErrors } from '../api/request-info.js';
import { invalidContinueToken as invalidToken, listDigest as digestOf, parseJson, TokenSealer } from './sealed-token.js';
import { backingName, bookkeeping } from './storage-mapping.js';

const tokenVersion = 'tenancy.metal3.io/v1';
const kubeTokenVersion = 'meta.k8s.io/v1';

/** What a list is about; a token is bound to it. */
export interface ListIdentity {
  /** '' for a list across all namespaces. */
  readonly namespace: string;
  readonly labelSelector: string | undefined;
  readonly name: string | undefined;
}

interface VirtualToken {
  readonly v: string;
  readonly rv: number;
  /** Digest of the ListIdentity the token was issued for. */
  readonly list: string;
  /** The last object returned: the next page starts after its record. */
  readonly after: { readonly namespace: string; readonly name: string };
}

interface KubeToken {
  readonly v: string;
  readonly rv: number;
  readonly start: string;
}

/** Where a paginated list stands: its resourceVersion, and the last object returned (the next page starts after it). */
export interface ListPosition {
  readonly rv: number;
  readonly after: { readonly namespace: string; readonly name: string };
}

/** Seals and opens the tokens with the replicas' shared key. */
export class ContinueTokens {
  private readonly sealer: TokenSealer;

  /** `key`: 32 bytes, resolved once the shared key is loaded (lists with a continue token wait for it). */
  constructor(key: Promise<Uint8Array>) {
    this.sealer = new TokenSealer(key);
  }

  /** Our token for kube-apiserver's, given the last record of the page. */
  async wrap(kubeToken: string, lastRecord: ApiObject | undefined, list: ListIdentity): Promise<string> {
    return this.issue(positionAfterRecord(kubeToken, lastRecord), list);
  }

  /** Our token for a page served from memory: the list's resourceVersion and its last object. */
  async issue(position: ListPosition, list: ListIdentity): Promise<string> {
    const token: VirtualToken = { v: tokenVersion, rv: position.rv, list: listDigest(list), after: position.after };
    return this.sealer.seal(token);
  }

  /** Where the list stands; a token that is not ours, was changed, or is not for this list, is kube's 400. */
  async open(token: string, list: ListIdentity): Promise<ListPosition> {
    return positionOf(await this.sealer.open(token), list);
  }

  /** kube-apiserver's token for ours (the next page from kube-apiserver, at the token's resourceVersion). */
  async unwrap(token: string, list: ListIdentity): Promise<string> {
    return kubeTokenAt(await this.open(token, list));
  }
}

function positionAfterRecord(kubeToken: string, lastRecord: ApiObject | undefined): ListPosition {
  const decoded = decodeJson(kubeToken) as Partial<KubeToken> | undefined;
  const recordName = lastRecord?.metadata.name;
  const namespace = lastRecord?.metadata.labels?.[bookkeeping.namespaceLabel];
  const name = lastRecord?.metadata.annotations?.[bookkeeping.nameAnnotation];
  if (
    decoded?.v !== kubeTokenVersion ||
    typeof decoded.rv !== 'number' ||
    recordName === undefined ||
    decoded.start !== `/${recordName}\u0000` ||
    namespace === undefined ||
    name === undefined
  ) {
    // kube changed its token format, or the page ended on a record that is not a claim's.
    throw internalError('unexpected continue token from storage');
  }
  return { rv: decoded.rv, after: { namespace, name } };
}

/** The checks kube makes on its own tokens, and ours: the version, the resourceVersion, a start key path.Clean cannot move. */
function positionOf(opened: unknown, list: ListIdentity): ListPosition {
  if (typeof opened !== 'object' || opened === null) throw invalidToken('continue key is not valid');
  const decoded = opened as Partial<VirtualToken>;
  if (decoded.v !== tokenVersion) throw invalidToken('continue key is not valid: server does not recognize this encoded version');
  if (typeof decoded.rv !== 'number' || !Number.isSafeInteger(decoded.rv) || decoded.rv <= 0) {
    throw invalidToken(`continue key is not valid: incorrect encoded start resourceVersion (version ${tokenVersion})`);
  }
  const after = decoded.after;
  if (typeof after?.namespace !== 'string' || typeof after.name !== 'string' || !isKeySegment(after.namespace) || !isKeySegment(after.name)) {
    throw invalidToken('continue key is not valid');
  }
  if (decoded.list !== listDigest(list) || (list.namespace !== '' && after.namespace !== list.namespace)) {
    throw invalidToken('continue key is not valid: it was issued for another list');
  }
  return { rv: decoded.rv, after: { namespace: after.namespace, name: after.name } };
}

function kubeTokenAt(position: ListPosition): string {
  const kube: KubeToken = { v: kubeTokenVersion, rv: position.rv, start: `/${backingName(position.after.namespace, position.after.name)}\u0000` };
  return Buffer.from(JSON.stringify(kube)).toString('base64url');
}

/** Names that kube would accept as one key segment: nothing that path.Clean could move. */
function isKeySegment(text: string): boolean {
  return text !== '' && pathSegmentNameErrors(text).length === 0;
}

function listDigest(list: ListIdentity): string {
  return digestOf([list.namespace, list.labelSelector ?? '', list.name ?? '']);
}

function decodeJson(token: string): unknown {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(token)) return undefined;
  return parseJson(Buffer.from(token, 'base64url').toString('utf8'));
}
