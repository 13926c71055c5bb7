import { isDeepStrictEqual } from 'node:util';

/**
 * Equality of two JSON values as kube-apiserver stores them: key order and
 * undefined fields do not count (kube re-encodes objects with sorted keys),
 * so a controller comparing what it read with what it wants never rewrites
 * an object that is already right.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? null)), JSON.parse(JSON.stringify(b ?? null)));
}
