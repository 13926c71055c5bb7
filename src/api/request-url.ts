/**
 * The request target, parsed once, the way kube-apiserver's Go server sees
 * it (net/url ParseRequestURI and URL.Query): the path is percent-decoded
 * as a whole and never cleaned (no `.`/`..` resolution, `//` kept, `%2F`
 * becomes a `/` that later splits a segment, as in kube); the query follows
 * url.ParseQuery: pairs split on `&`, a pair containing `;` or an invalid
 * escape is dropped, `+` is a space, a pair without a key is dropped.
 *
 * Every stage reads this result from the request context; nothing parses
 * `req.url` again (WHATWG URL would resolve dot segments and treat a
 * leading `//` as a host, so a different path would be served than the one
 * kube-apiserver authorized).
 */
import { badRequest } from './status.js';

export interface RequestUrl {
  /** The decoded path, as Go's URL.Path. */
  readonly pathname: string;
  readonly searchParams: URLSearchParams;
}

/** Throws a 400 where Go's server refuses the request line (an invalid escape in the path). */
export function parseRequestUrl(target: string): RequestUrl {
  const question = target.indexOf('?');
  const rawPath = question < 0 ? target : target.slice(0, question);
  const rawQuery = question < 0 ? '' : target.slice(question + 1);
  const pathname = percentDecode(rawPath, false);
  if (pathname === undefined) throw badRequest(`invalid URL escape in request path ${JSON.stringify(rawPath)}`);
  return { pathname, searchParams: parseQuery(rawQuery) };
}

/** url.ParseQuery, keeping only the pairs Go keeps (its error is ignored by URL.Query()). */
export function parseQuery(rawQuery: string): URLSearchParams {
  const pairs: [string, string][] = [];
  for (const piece of rawQuery.split('&')) {
    if (piece === '' || piece.includes(';')) continue;
    const equals = piece.indexOf('=');
    const key = percentDecode(equals < 0 ? piece : piece.slice(0, equals), true);
    const value = percentDecode(equals < 0 ? '' : piece.slice(equals + 1), true);
    if (key === undefined || value === undefined || key === '') continue;
    pairs.push([key, value]);
  }
  return new URLSearchParams(pairs);
}

/**
 * url.unescape: every `%` must start two hex digits (else undefined); in a
 * query `+` is a space. Bytes are decoded as UTF-8; invalid sequences become
 * U+FFFD, as Go's string conversion of the bytes would when printed.
 */
function percentDecode(text: string, plusIsSpace: boolean): string | undefined {
  if (!text.includes('%') && !(plusIsSpace && text.includes('+'))) return text;
  const bytes: number[] = [];
  const raw = Buffer.from(text, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] ?? 0;
    if (byte === 0x25) {
      const hex = raw.subarray(i + 1, i + 3).toString('latin1');
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (byte === 0x2b && plusIsSpace) {
      bytes.push(0x20);
    } else {
      bytes.push(byte);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
