/**
 * Accept-header negotiation as kube-apiserver does it: ranges are tried in
 * the order the client listed them (kube ignores q-values), parameters such
 * as `as=Table;g=meta.k8s.io;v=v1` select a special representation, and a
 * request that accepts nothing we can produce gets 406.
 */
import { notAcceptable } from './status.js';

export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly params: Readonly<Record<string, string>>;
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: {} }];
  return header
    .split(',')
    .map((part) => parseMediaRange(part))
    .filter((range): range is MediaRange => range !== undefined);
}

export function parseMediaRange(text: string): MediaRange | undefined {
  const [essence = '', ...paramParts] = text.split(';');
  const [type, subtype] = essence.trim().toLowerCase().split('/');
  if (type === undefined || subtype === undefined || type === '' || subtype === '') return undefined;
  const params: Record<string, string> = {};
  for (const part of paramParts) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim().toLowerCase();
    if (key === 'q') continue;
    params[key] = part.slice(eq + 1).trim().replace(/^"|"$/g, '');
  }
  return { type, subtype, params };
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
