/**
 * Accept-header negotiation as kube-apiserver does it: ranges are tried in
 * the client's preference order, parameters such
 * as `as=Table;g=meta.k8s.io;v=v1` select a special representation, and a
 * request that accepts nothing we can produce gets 406.
 */
import { notAcceptable } from './status.js';

export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly params: Readonly<Record<string, string>>;
  readonly q: number;
}

/**
 * Acceptable ranges in preference order, as goautoneg (used by kube) orders
 * them: by q-value, then specific types before wildcards, then as listed.
 * Ranges with q=0 are refused by the client and dropped.
 */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  return header
    .split(',')
    .map((part) => parseMediaRange(part))
    .filter((range): range is MediaRange => range !== undefined && range.q > 0)
    .map((range, index) => ({ range, index }))
    .sort((a, b) => b.range.q - a.range.q || wildcards(a.range) - wildcards(b.range) || a.index - b.index)
    .map(({ range }) => range);
}

function wildcards(range: MediaRange): number {
  return (range.type === '*' ? 1 : 0) + (range.subtype === '*' ? 1 : 0);
}

export function parseMediaRange(text: string): MediaRange | undefined {
  const [essence = '', ...paramParts] = text.split(';');
  const [type, subtype] = essence.trim().toLowerCase().split('/');
  if (type === undefined || subtype === undefined || type === '' || subtype === '') return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const part of paramParts) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim().replace(/^"|"$/g, '');
    if (key === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0;
    else params[key] = value;
  }
  return { type, subtype, params, q };
}

/** True when the range matches application/json (with no representation selected). */
export function isPlainJson(range: MediaRange): boolean {
  const typeMatches = range.type === '*' || range.type === 'application';
  const subtypeMatches = range.subtype === '*' || range.subtype === 'json';
  return typeMatches && subtypeMatches && range.params['as'] === undefined;
}

/** A representation the endpoint can produce, matched against Accept ranges. */
export interface Offer<T> {
  readonly value: T;
  readonly matches: (range: MediaRange) => boolean;
}

/** The first offer matching the earliest acceptable range, or 406. */
export function negotiate<T>(accept: string | undefined, offers: readonly Offer<T>[], accepted: readonly string[]): T {
  for (const range of parseAccept(accept)) {
    const offer = offers.find((o) => o.matches(range));
    if (offer !== undefined) return offer.value;
  }
  throw notAcceptable(`only the following media types are accepted: ${accepted.join(', ')}`);
}
