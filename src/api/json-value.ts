/** Narrowing of decoded JSON values, shared by every parser of request bodies and stored objects. */

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
