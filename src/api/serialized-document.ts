/**
 * Documents that are built once and served many times (discovery, OpenAPI):
 * serialized once, with kube-openapi's ETag (quoted uppercase hex SHA-512).
 */
import { createHash } from 'node:crypto';

export interface SerializedDocument {
  readonly body: Buffer;
  /** Uppercase hex SHA-512 of the body (the `hash` of OpenAPI v3 URLs). */
  readonly hash: string;
  /** The ETag header value: the hash, quoted. */
  readonly etag: string;
}

export function serializeDocument(document: object): SerializedDocument {
  const body = Buffer.from(JSON.stringify(document), 'utf8');
  const hash = createHash('sha512').update(body).digest('hex').toUpperCase();
  return { body, hash, etag: `"${hash}"` };
}

/** RFC 9110 If-None-Match: `*` or a list of (possibly weak) entity tags, compared weakly. */
export function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  return value
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag);
}
