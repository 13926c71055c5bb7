/**
 * What label and field selectors share: errors raised while parsing, already
 * in the words of k8s.io/apimachinery's labels.Parse and fields.ParseSelector,
 * answered as the 400 kube-apiserver gives; and the own-property lookup both
 * matchers read labels and fields with.
 */
import { badRequest } from './status.js';

/** A selector error whose message is already in kube's words. */
export class SelectorError extends Error {}

export function fail(message: string): never {
  throw new SelectorError(message);
}

/** Turns SelectorErrors into the 400 kube-apiserver answers with the same text. */
export function asBadRequest<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof SelectorError) throw badRequest(error.message);
    throw error;
  }
}

export function lookup(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  // Own properties only: a label called "constructor" must not hit Object.prototype.
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}
