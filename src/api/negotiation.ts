/**
 * Accept and Content-Type parsing as kube-apiserver does it.
 *
 * Accept: github.com/munnerz/goautoneg `ParseAccept` (what
 * k8s.io/apiserver handlers/negotiation uses): ranges split on `,` and `;`
 * without lowercasing or unquoting, `q` read with strconv.ParseFloat (an
 * unparsable q is 0), q=0 ranges kept (kube never drops them, it only
 * orders by q), then sorted by goautoneg's comparison. Parameters such as
 * `as=Table;g=meta.k8s.io;v=v1` select a special representation; a request
 * that accepts nothing we can produce gets 406.
 *
 * Content-Type: Go's mime.ParseMediaType, which kube's
 * NegotiateInputSerializerForMediaType applies: an unparsable type is
 * kube's 415, not JSON.
 */
import { notAcceptable } from './status.js';

export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly params: Readonly<Record<string, string>>;
  readonly q: number;
}

const everything: MediaRange = { type: '*', subtype: '*', params: {}, q: 1 };

/** Acceptable ranges in goautoneg's order; an absent or empty header accepts anything. */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header === '') return [everything];
  const ranges = header.split(',').flatMap((part) => {
    const range = parseMediaRange(part);
    return range === undefined ? [] : [range];
  });
  return goSortSmall(ranges, precedes);
}

/** goautoneg's acceptSlice.Less. */
function precedes(a: MediaRange, b: MediaRange): boolean {
  if (a.q > b.q) return true;
  if (a.type !== '*' && b.type === '*') return true;
  return a.subtype !== '*' && b.subtype === '*';
}

/**
 * sort.Sort as Go runs it on the short slices Accept headers give
 * (insertion sort below 13 elements); longer headers are ordered the same
 * way, which Go's pdqsort need not match exactly.
 */
function goSortSmall<T>(items: T[], less: (a: T, b: T) => boolean): T[] {
  for (let i = 1; i < items.length; i++) {
    for (let j = i; j > 0 && less(items[j] as T, items[j - 1] as T); j--) {
      [items[j - 1], items[j]] = [items[j] as T, items[j - 1] as T];
    }
  }
  return items;
}

const trimSpaces = (text: string): string => text.replace(/^ +| +$/g, '');

/** One goautoneg clause, or undefined for what goautoneg skips (no `/` except `*`, two `/`). */
export function parseMediaRange(text: string): MediaRange | undefined {
  const [essence = '', ...paramParts] = trimSpaces(text).split(';');
  const slash = essence.indexOf('/');
  const type = trimSpaces(slash === -1 ? essence : essence.slice(0, slash));
  let subtype: string;
  if (slash === -1 || slash === essence.length - 1) {
    if (type !== '*') return undefined;
    subtype = '*';
  } else {
    const rest = essence.slice(slash + 1);
    if (rest.includes('/')) return undefined;
    subtype = trimSpaces(rest);
  }
  const params: Record<string, string> = {};
  let q = 1;
  for (const part of paramParts) {
    const pieces = part.split('=');
    if (pieces.length !== 2) continue;
    const key = trimSpaces(pieces[0] ?? '');
    const value = pieces[1] ?? '';
    if (key === 'q') q = goParseFloat(value);
    else params[key] = trimSpaces(value);
  }
  return { type, subtype, params, q };
}

/** strconv.ParseFloat's decimal syntax; goautoneg keeps the 0 it returns on error. */
function goParseFloat(text: string): number {
  if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(text)) return Number.NaN;
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return 0;
  return Number(text);
}

/** True when the range matches application/json (with no representation selected). */
export function isPlainJson(range: MediaRange): boolean {
  const typeMatches = range.type === 'application' || (range.type === '*' && range.subtype === '*');
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

const tokenPattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * A request body's media type as Go's mime.ParseMediaType reads it
 * (lowercased, parameters checked), '' for an absent or empty header, and
 * undefined when Go cannot parse it.
 */
export function parseContentType(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return '';
  const semicolon = header.indexOf(';');
  const essence = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  const [type = '', subtype, extra] = essence.split('/');
  if (!tokenPattern.test(type) || extra !== undefined || (subtype !== undefined && !tokenPattern.test(subtype))) return undefined;
  return semicolon === -1 || validParameters(header.slice(semicolon)) ? essence : undefined;
}

/** mime.ParseMediaType's parameter loop: `; token=token|"quoted"`, no repeats, trailing `;` allowed. */
function validParameters(text: string): boolean {
  const parameter = /^;\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*=\s*("(?:[^"\\]|\\.)*"|[!#$%&'*+\-.^_`|~0-9A-Za-z]+)/;
  const seen = new Set<string>();
  let rest = text;
  for (;;) {
    rest = rest.trimStart();
    if (rest === '') return true;
    const match = parameter.exec(rest);
    if (match === null) return rest.trim() === ';';
    const key = (match[1] ?? '').toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    rest = rest.slice(match[0].length);
  }
}
