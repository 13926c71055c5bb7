/** The values the body-decoder worker's modules build and pass on. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A decoded body: JSON's values, or YAML's, whose mappings are Maps
 * (inserting and walking 100,000 keys costs a Map a fraction of what it
 * costs an object).
 */
export type DecodedValue = null | boolean | number | string | DecodedValue[] | DecodedMap | { [key: string]: DecodedValue };
export type DecodedMap = Map<string, DecodedValue>;
