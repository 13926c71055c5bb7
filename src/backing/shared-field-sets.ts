/**
 * One copy of each distinct managedFields field set (fieldsV1) in what the
 * shared caches keep.
 *
 * Every record keeps its managedFields (HostClaim answers show them), and
 * the field sets of records written by the same clients are the same trees:
 * at issue #12's scenario, 40,000 entries of 10,000 records held ~16 MB of
 * fieldsV1 objects, most of them equal (docs/performance.md, "Session 18").
 * Equal trees are kept once: the first one seen becomes the shared copy,
 * frozen, because every object holding it shares it.
 *
 * A field set is identified by the SHA-256 of its JSON text: equal text is
 * an equal tree with its keys in the same order, so a response built from
 * the shared copy is byte for byte the one built from the decoded tree.
 * Shared copies are held weakly: a field set no cached object holds any
 * more leaves the table.
 */
import { hash } from 'node:crypto';
import { deepFreeze } from '../api/json-value.js';

type FieldSet = Record<string, unknown>;

const sharedCopies = new Map<string, WeakRef<FieldSet>>();
const released = new FinalizationRegistry<string>((key) => {
  // Another copy may have taken the key since: only a dead entry goes.
  if (sharedCopies.get(key)?.deref() === undefined) sharedCopies.delete(key);
});

/** The shared copy of a field set equal to `fields` (frozen; `fields` itself if it is the first). */
export function sharedFieldSet(fields: FieldSet): FieldSet {
  if (Object.isFrozen(fields)) return fields;
  const key = hash('sha256', JSON.stringify(fields), 'base64');
  const existing = sharedCopies.get(key)?.deref();
  if (existing !== undefined) return existing;
  deepFreeze(fields);
  sharedCopies.set(key, new WeakRef(fields));
  released.register(fields, key);
  return fields;
}

/**
 * Replaces, in place, each managedFields entry's fieldsV1 of a decoded
 * object by its shared copy, and returns the object.
 */
export function shareFieldSets<T extends { readonly metadata: object }>(object: T): T {
  const entries = (object.metadata as { readonly managedFields?: unknown }).managedFields;
  if (!Array.isArray(entries)) return object;
  for (const entry of entries as unknown[]) {
    if (typeof entry !== 'object' || entry === null || Object.isFrozen(entry)) continue;
    const holder = entry as { fieldsV1?: unknown };
    const fields = holder.fieldsV1;
    if (typeof fields === 'object' && fields !== null && !Array.isArray(fields)) holder.fieldsV1 = sharedFieldSet(fields as FieldSet);
  }
  return object;
}
