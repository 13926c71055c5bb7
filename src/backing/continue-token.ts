/**
 * Continue tokens of paginated lists, translated both ways between the
 * virtual resource and its records (k8s.io/apiserver/pkg/storage/continue.go).
 *
 * kube-apiserver's token is `{"v":"meta.k8s.io/v1","rv":N,"start":"/<key>\0"}`,
 * where the key is the last record's name (`<namespace>.<name>` or a
 * digest): handed to a tenant it would reveal the backing naming. The token
 * we issue names the last object by its virtual namespace and name instead,
 * and records what the list was about (namespace, label selector, name):
 * a token is only accepted for the same list, so it cannot be replayed
 * against another namespace's records. It is opaque to clients but not yet
 * signed: anyone may craft one, which is harmless because the list is still
 * scoped by the namespace label (tamper-evidence is issue #12's).
 */
import { createHash } from 'node:crypto';
import { badRequest, internalError } from '../api/status.js';
import type { ApiObject } from '../api/rest/types.js';
import { pathSegmentNameErrors } from '../api/request-info.js';
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

/** Our token for kube-apiserver's, given the last record of the page. */
export function wrapContinue(kubeToken: string, lastRecord: ApiObject | undefined, list: ListIdentity): string {
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
  const token: VirtualToken = { v: tokenVersion, rv: decoded.rv, list: listDigest(list), after: { namespace, name } };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** kube-apiserver's token for ours; a token that is not ours, or not for this list, is kube's 400. */
export function unwrapContinue(token: string, list: ListIdentity): string {
  const decoded = decodeJson(token) as Partial<VirtualToken> | undefined;
  if (decoded === undefined) throw invalidToken('continue key is not valid');
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
  const kube: KubeToken = { v: kubeTokenVersion, rv: decoded.rv, start: `/${backingName(after.namespace, after.name)}\u0000` };
  return Buffer.from(JSON.stringify(kube)).toString('base64url');
}

function invalidToken(detail: string): Error {
  return badRequest(`invalid continue token: ${detail}`);
}

/** Names that kube would accept as one key segment: nothing that path.Clean could move. */
function isKeySegment(text: string): boolean {
  return text !== '' && pathSegmentNameErrors(text).length === 0;
}

function listDigest(list: ListIdentity): string {
  return createHash('sha256')
    .update(JSON.stringify([list.namespace, list.labelSelector ?? '', list.name ?? '']))
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
