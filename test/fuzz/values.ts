/**
 * Hostile documents for request bodies, generated as a small tree rather
 * than as JavaScript values, so that a body can carry what JSON.stringify
 * cannot write: duplicate keys, numbers beyond float64 (`1e400`,
 * `9999999999999999999`), nesting thousands of levels deep and huge strings
 * (both kept as a size so that fast-check shrinks a number, not a tree).
 * Serialized as JSON, as block YAML or, for YAML-only constructs (anchors,
 * aliases, tags, several documents), from templates.
 */
import fc from 'fast-check';

export type Doc =
  | { readonly kind: 'value'; readonly value: null | boolean | number | string }
  /** A scalar written as is (JSON number syntax the decoder must bound). */
  | { readonly kind: 'raw'; readonly text: string }
  /** Entries in order; a key may repeat. */
  | { readonly kind: 'object'; readonly entries: readonly (readonly [string, Doc])[] }
  | { readonly kind: 'array'; readonly items: readonly Doc[] }
  | { readonly kind: 'deep'; readonly depth: number; readonly container: 'object' | 'array' }
  | { readonly kind: 'long-string'; readonly length: number; readonly unit: string }
  | { readonly kind: 'many-keys'; readonly count: number };

export const value = (v: null | boolean | number | string): Doc => ({ kind: 'value', value: v });
export const object = (entries: readonly (readonly [string, Doc])[]): Doc => ({ kind: 'object', entries });

/** Sizes stay below the known stalls of issue 15 item 2 (100,000 keys), which a dedicated test covers; see docs/reliability.md. */
export const LIMITS = { depth: 6_000, stringLength: 1_200_000, keys: 3_000 } as const;

const rawNumbers = ['1e400', '-1e400', '9999999999999999999', '-9223372036854775809', '18446744073709551616', '-0', '1.0', '0.1e-400', '1E+2', '123456789012345678901234567890.5'];

/** Mostly small; one time in ten anywhere up to `max`, so that bounds are reached without every body being huge. */
export function size(max: number): fc.Arbitrary<number> {
  return fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: Math.min(64, max) }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max }) });
}

const strings = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', ' ', 'true', 'null', '0', '-', '/', '..', '%2e', 'a/b', 'tenant-b', 'hostclaim-system', '\u0000', '\ud800', '\ufeff', 'é'),
);

const leaf: fc.Arbitrary<Doc> = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), strings).map((v) => value(Number.isNaN(v) ? null : v)) },
  { weight: 2, arbitrary: fc.constantFrom(...rawNumbers).map((text): Doc => ({ kind: 'raw', text })) },
  { weight: 1, arbitrary: fc.record({ depth: size(LIMITS.depth), container: fc.constantFrom('object' as const, 'array' as const) }).map((d): Doc => ({ kind: 'deep', ...d })) },
  { weight: 1, arbitrary: fc
        .constantFrom('x', 'é', '\\u0000', '\\"')
        .chain((unit) => size(Math.floor(LIMITS.stringLength / unit.length)).map((length): Doc => ({ kind: 'long-string', length, unit }))) },
  { weight: 1, arbitrary: size(LIMITS.keys).map((count): Doc => ({ kind: 'many-keys', count })) },
);

/** Any hostile value: scalars of every type, containers with repeated keys and nulls, sizes at the bounds. */
export const hostile: fc.Arbitrary<Doc> = fc.letrec<{ doc: Doc }>((tie) => ({
  doc: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 5, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(fc.tuple(fc.oneof(strings, fc.constantFrom('a', 'a', 'name', 'metadata')), tie('doc')), { maxLength: 4 }).map(object) },
    { weight: 1, arbitrary: fc.array(tie('doc'), { maxLength: 4 }).map((items): Doc => ({ kind: 'array', items })) },
  ),
})).doc;

/** Replaces (or adds) the value at `path` in an object document; intermediate non-objects become objects. */
export function setAt(doc: Doc, path: readonly string[], replacement: Doc): Doc {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  const entries = doc.kind === 'object' ? doc.entries : [];
  const current = entries.find(([key]) => key === head)?.[1] ?? object([]);
  const next = setAt(current, rest, replacement);
  return entries.some(([key]) => key === head) ? object(entries.map(([key, v]) => [key, key === head ? next : v] as const)) : object([...entries, [head, next]]);
}

/** Appends an entry with a key that is already present (a duplicate key). */
export function duplicateAt(doc: Doc, path: readonly string[], replacement: Doc): Doc {
  if (doc.kind !== 'object') return doc;
  const [head, ...rest] = path;
  if (head === undefined) return doc;
  if (rest.length === 0) return object([...doc.entries, [head, replacement]]);
  return object(doc.entries.map(([key, v]) => [key, key === head ? duplicateAt(v, rest, replacement) : v] as const));
}

export function toJson(doc: Doc): string {
  switch (doc.kind) {
    case 'value':
      return JSON.stringify(doc.value);
    case 'raw':
      return doc.text;
    case 'object':
      return `{${doc.entries.map(([key, v]) => `${JSON.stringify(key)}:${toJson(v)}`).join(',')}}`;
    case 'array':
      return `[${doc.items.map(toJson).join(',')}]`;
    case 'deep':
      return doc.container === 'object' ? `${'{"a":'.repeat(doc.depth)}null${'}'.repeat(doc.depth)}` : `${'['.repeat(doc.depth)}${']'.repeat(doc.depth)}`;
    case 'long-string':
      return `"${doc.unit.repeat(doc.length)}"`;
    case 'many-keys':
      return `{${Array.from({ length: doc.count }, (_, i) => `"k${i}":${i}`).join(',')}}`;
  }
}

/** Block-style YAML; scalars and size-shaped nodes in flow style (JSON is YAML). */
export function toYaml(doc: Doc, indent = 0): string {
  const pad = ' '.repeat(indent);
  if (doc.kind === 'object' && doc.entries.length > 0) {
    return doc.entries.map(([key, v]) => (isBlock(v) ? `${pad}${JSON.stringify(key)}:\n${toYaml(v, indent + 2)}` : `${pad}${JSON.stringify(key)}: ${toJson(v)}`)).join('\n');
  }
  if (doc.kind === 'array' && doc.items.length > 0) {
    return doc.items.map((v) => (isBlock(v) ? `${pad}-\n${toYaml(v, indent + 2)}` : `${pad}- ${toJson(v)}`)).join('\n');
  }
  return `${pad}${toJson(doc)}`;
}

function isBlock(doc: Doc): boolean {
  return (doc.kind === 'object' && doc.entries.length > 0) || (doc.kind === 'array' && doc.items.length > 0);
}

/** YAML-only constructs, each a whole document built around a valid claim header. */
export const yamlTemplates: fc.Arbitrary<(header: string) => string> = fc.oneof(
  fc.integer({ min: 1, max: 9 }).map((levels) => (header: string) => {
    // A "billion laughs" alias bomb, `levels` levels of nine aliases each.
    const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i <= levels; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(',')}]`);
    return `${header}\nspec:\n  poweredOn: false\n  bomb:\n${lines.map((l) => `    ${l}`).join('\n')}`;
  }),
  fc.constant((header: string) => `${header}\nspec: &self\n  poweredOn: false\n  loop: *self`),
  fc.constant((header: string) => `${header}\nspec: &s [*s]`),
  fc.constantFrom('!!binary aGVsbG8=', '!!float 1', '!!int "x"', '!!python/object:os.system ls', '!!timestamp 2001-12-14', '!custom x', '!!set {a, b}', '!!omap [a: 1]').map(
    (tagged) => (header: string) => `${header}\nspec:\n  poweredOn: false\n  failureDomain: ${tagged}`,
  ),
  fc.constantFrom('yes', 'no', 'on', '~', '.inf', '-.nan', '0o17', '0x1F', '2001-12-14', '1_000', '12:30:00').map(
    (scalar) => (header: string) => `${header}\nspec:\n  poweredOn: ${scalar}\n  failureDomain: ${scalar}`,
  ),
  fc.constant((header: string) => `${header}\nspec:\n  poweredOn: false\n---\n${header}\nspec:\n  poweredOn: true`),
  fc.constant((header: string) => `${header}\nspec:\n  <<: {poweredOn: false}\n  <<: {poweredOn: true}`),
  fc.constant((header: string) => `${header}\n\tspec: {}`),
  fc.constant((header: string) => `${header}\nspec: {poweredOn: false\n`),
);
