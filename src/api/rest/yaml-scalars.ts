/**
 * YAML scalars resolved as go.yaml.in/yaml/v2 resolves them (resolve.go,
 * decode.go), with the `yaml` package's YAML 1.1 tags: plain scalars by
 * their text, explicitly tagged ones as resolve() checks them.
 */
import { Document, isScalar, type ScalarTag } from 'yaml';
import { BodyError, yamlFailure } from './body-error.ts';
import type { JsonValue } from './decoded-value.ts';

/** A plain `<<` where a key stands: YAML 1.1's merge key, no node of its own. */
export const mergeKey = Symbol('merge');

const yamlTag = 'tag:yaml.org,2002:';
const strTag = `${yamlTag}str`;
const mergeTag = `${yamlTag}merge`;

/** The `yaml` package's YAML 1.1 scalar tags, in the order it tries them on a plain scalar. */
const yaml11 = new Document(null, { version: '1.1' });
const scalarTags = yaml11.schema.tags.filter((tag): tag is ScalarTag => tag.collection === undefined);
/** The first characters of every plain scalar a YAML 1.1 tag other than !!str matches (null, bool, numbers, timestamps, `<<`). */
const mayResolve = new Set('~nNyYtTfFoO+-.0123456789<');

/**
 * A plain scalar resolved as YAML 1.1 resolves it without a tag: its tag
 * and value, or mergeKey for `<<` where a key stands.
 */
export function implicitScalar(text: string, atKey: boolean): { readonly tag: string; readonly value: JsonValue } | typeof mergeKey {
  if (text !== '' && !mayResolve.has(text.charAt(0))) return { tag: strTag, value: text };
  const tag = scalarTags.find((t) => (t.default === true || (atKey && t.default === 'key')) && t.test?.test(text) === true);
  if (tag === undefined) return { tag: strTag, value: text };
  if (tag.tag === mergeTag) return mergeKey;
  const resolved = tag.resolve(text, (message) => {
    throw new BodyError('invalid', `${yamlFailure}yaml: ${message}`);
  }, yaml11.options);
  return { tag: tag.tag, value: scalarValue(isScalar(resolved) ? resolved.value : resolved, text) };
}

/** goyaml decodes timestamps into interface{} as their text; numbers, booleans and null as such. */
function scalarValue(value: unknown, source: string): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : source;
  if (typeof value === 'bigint') return Number(value);
  return source;
}

/** Tags goyaml resolves a scalar against (resolve.go resolvableTag); any other tag leaves the scalar a string. */
const resolvableTags = new Set(['str', 'bool', 'int', 'float', 'null', 'timestamp'].map((name) => `${yamlTag}${name}`));

/** A scalar with an explicit tag, as goyaml v2's resolve and decoder.scalar decode it. */
export function explicitScalar(written: string, text: string): JsonValue {
  const tag = written.startsWith('!!') ? `${yamlTag}${written.slice(2)}` : written.startsWith('!<') ? written.slice(2, -1) : written;
  if (tag === `${yamlTag}binary`) return binaryText(text);
  if (tag === strTag || !resolvableTags.has(tag)) return text;
  const resolved = implicitScalar(text, false);
  const resolvedTag = resolved === mergeKey ? strTag : resolved.tag;
  if (resolved !== mergeKey && (resolvedTag === tag || (tag === `${yamlTag}float` && resolvedTag === `${yamlTag}int`))) return resolved.value;
  const short = (name: string) => (name.startsWith(yamlTag) ? `!!${name.slice(yamlTag.length)}` : name);
  throw new BodyError('invalid', `${yamlFailure}yaml: cannot decode ${short(resolvedTag)} \`${text}\` as a ${short(tag)}`);
}

/** A `!!binary` scalar: its bytes, decoded as Go's base64.StdEncoding does (padding required, line breaks ignored). */
function binaryText(text: string): string {
  const base64 = text.replace(/[\r\n]/g, '');
  if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw new BodyError('invalid', `${yamlFailure}yaml: !!binary value contains invalid base64 data`);
  return Buffer.from(base64, 'base64').toString('utf8');
}
