/**
 * One copy of each repeated string in what the shared caches keep.
 *
 * JSON.parse gives every string value its own copy: 10,000 hosts of one
 * disk model hold the model's name 30,000 times, and every record its
 * apiVersion, its conditions' messages and its managedFields' manager. At
 * issue #12's scenario such copies were 23 MB of the server's 130 MB of live
 * heap (docs/performance.md, "Session 17"), all of it kept for as long as
 * the objects are cached and marked by every full collection.
 *
 * V8 keeps one internalized copy of each string used as a property name, in
 * a table that drops the strings nothing references any more. Storing a
 * value as the key of a scratch dictionary and reading the key back gives
 * that copy, so equal values end up as one string, and a value that leaves
 * the caches leaves the table too.
 */

/** Shorter strings JSON.parse already gives as the one internalized copy (V8 does so below 10 characters). */
const minInternedLength = 10;
/** Longer strings (a last-applied configuration, a certificate) rarely repeat: hashing them would buy nothing. */
const maxInternedLength = 256;

/** A null-prototype object in dictionary mode (deleting a property other than the last one puts it there), kept empty. */
const scratch: Record<string, number> = Object.create(null) as Record<string, number>;
scratch['a'] = 0;
scratch['b'] = 0;
Reflect.deleteProperty(scratch, 'a');
Reflect.deleteProperty(scratch, 'b');

/** The internalized copy of `value`: equal to it, and the same string for every equal value. */
export function internalized(value: string): string {
  if (value.length < minInternedLength || value.length > maxInternedLength) return value;
  scratch[value] = 0;
  for (const key in scratch) {
    Reflect.deleteProperty(scratch, key);
    return key;
  }
  return value;
}

/**
 * Replaces, in place, every string value of a decoded JSON value (object
 * properties and array items, at any depth) by its internalized copy, and
 * returns the value. Keys need nothing: JSON.parse internalizes them.
 */
export function internStrings<T>(value: T): T {
  internIn(value);
  return value;
}

function internIn(value: unknown): void {
  // A frozen value (a shared constant) is left as it is: it cannot be written.
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') value[i] = internalized(item);
      else internIn(item);
    }
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    if (typeof item === 'string') record[key] = internalized(item);
    else internIn(item);
  }
}
