/**
 * Field selectors for list, watch and deletecollection: the
 * `fieldSelector` query parameter parsed like k8s.io/apimachinery's
 * fields.ParseSelector, then checked like the field label conversion
 * apiextensions-apiserver gives a CRD, so clients get kube-apiserver's 400
 * messages.
 */
import { compareCodePoints } from './go-strings.js';
import { asBadRequest, fail, lookup } from './selector-common.js';

export interface FieldSelector {
  /** A field missing from `fields` counts as the empty string, as in kube. */
  matches(fields: Readonly<Record<string, string>>): boolean;
  isEverything(): boolean;
  /** The value `field` must equal for anything to match, if the selector pins it. */
  requiresExactMatch(field: string): string | undefined;
  toString(): string;
}

interface FieldTerm {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

class TermsSelector implements FieldSelector {
  constructor(private readonly terms: readonly FieldTerm[]) {}

  matches(fields: Readonly<Record<string, string>>): boolean {
    return this.terms.every((term) => {
      const actual = lookup(fields, term.field) ?? '';
      return term.operator === '=' ? actual === term.value : actual !== term.value;
    });
  }

  isEverything(): boolean {
    return this.terms.length === 0;
  }

  requiresExactMatch(field: string): string | undefined {
    return this.terms.find((term) => term.operator === '=' && term.field === field)?.value;
  }

  toString(): string {
    return this.terms.map((term) => `${term.field}${term.operator}${escapeFieldValue(term.value)}`).join(',');
  }
}

/** fields.EscapeValue: `\`, `,` and `=` get a backslash. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (char) => `\\${char}`);
}

/** Splits on commas that are not backslash-escaped; escapes stay in the terms. */
function splitFieldTerms(selector: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    if (selector[i] === '\\') i++;
    else if (selector[i] === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  if (selector !== '') terms.push(selector.slice(start));
  return terms;
}

/** fields.UnescapeValue: only `\\`, `\,` and `\=` are escapes; bare `,` or `=` are errors. */
function unescapeFieldValue(raw: string): string {
  let value = '';
  let escaping = false;
  for (const char of raw) {
    if (escaping) {
      if (char !== '\\' && char !== ',' && char !== '=') fail(`invalid field selector: invalid escape sequence: \\${char}`);
      value += char;
      escaping = false;
    } else if (char === '\\') {
      escaping = true;
    } else if (char === ',' || char === '=') {
      // Go prints the rune with %v, i.e. as its number.
      fail(`invalid field selector: unescaped character in value: ${char.codePointAt(0) ?? 0}`);
    } else {
      value += char;
    }
  }
  if (escaping) fail('invalid field selector: invalid escape sequence: \\');
  return value;
}

/** The field is everything before the first operator; "!=" and "==" win over "=". */
function parseFieldTerm(selector: string, term: string): FieldTerm {
  const match = /!=|==?/.exec(term);
  if (match === null) fail(`invalid selector: '${selector}'; can't understand '${term}'`);
  const field = term.slice(0, match.index);
  const value = unescapeFieldValue(term.slice(match.index + match[0].length));
  return { field, operator: match[0] === '!=' ? '!=' : '=', value };
}

/**
 * Parses a `fieldSelector` query parameter like fields.ParseSelector, then
 * rejects fields outside `supportedFields` like a CRD's field label
 * conversion. Terms are sorted first, so the first bad term in sorted order
 * is reported, and parse errors win over unsupported fields, as in kube.
 * Throws a 400 ApiError with kube's message. `any` accepts every field, as
 * fields.ParseSelector alone does (the RequestInfo reads selectors that way).
 */
export function parseFieldSelector(text: string, supportedFields: readonly string[] | 'any'): FieldSelector {
  return asBadRequest(() => {
    const terms = splitFieldTerms(text)
      .sort(compareCodePoints)
      .filter((term) => term !== '')
      .map((term) => parseFieldTerm(text, term))
      // kube parses through an identity transform, which drops terms with
      // neither field nor value: "=" and "!=" select everything.
      .filter((term) => term.field !== '' || term.value !== '');
    const unsupported = supportedFields === 'any' ? undefined : terms.find((term) => !supportedFields.includes(term.field));
    if (unsupported !== undefined) fail(`field label not supported: ${unsupported.field}`);
    return new TermsSelector(terms);
  });
}
