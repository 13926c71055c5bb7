/**
 * Label and field selectors for list, watch and deletecollection. Grammar,
 * matching and error wording follow k8s.io/apimachinery (labels.Parse,
 * fields.ParseSelector, metav1.LabelSelectorAsSelector) and the CRD field
 * label check of apiextensions-apiserver, so clients get the same 400
 * messages from us as from kube-apiserver.
 *
 * Deviations from kube (none affects which objects match):
 *  - kube sorts requirements with an unstable sort; with more than 12
 *    requirements sharing a key, its toString() may order them differently.
 *    We sort stably.
 *  - For metav1 selectors kube walks matchLabels in Go's random map order, so
 *    with several invalid entries the one reported varies; we report the
 *    first in key order.
 *  - Go's %q (used to show bad keys and values) decides which characters are
 *    printable from Go's Unicode 15 tables; Node 24 has Unicode 17, so the
 *    ~10k characters assigned since are shown raw instead of as \uxxxx.
 *    Lone UTF-16 surrogates (impossible in Go strings) are shown as \udxxx.
 */
import { Buffer } from 'node:buffer';
import { badRequest } from './status.js';

export interface LabelSelector {
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** True when the selector does not restrict anything. */
  isEverything(): boolean;
  /** Canonical form: requirements sorted by key, set values sorted. */
  toString(): string;
}

export interface FieldSelector {
  /** A field missing from `fields` counts as the empty string, as in kube. */
  matches(fields: Readonly<Record<string, string>>): boolean;
  isEverything(): boolean;
  /** The value `field` must equal for anything to match, if the selector pins it. */
  requiresExactMatch(field: string): string | undefined;
  toString(): string;
}

/**
 * One requirement of a HostClaim's hostSelector. Upstream's HostSelector
 * (BMO, like CAPM3's) spells operators as k8s.io/apimachinery/pkg/selection
 * does: in, notin, =, ==, !=, exists, ! — not metav1.LabelSelector's In/NotIn.
 */
export interface HostSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[] | null;
}

export interface HostSelector {
  readonly matchLabels?: Readonly<Record<string, string>> | null;
  readonly matchExpressions?: readonly HostSelectorRequirement[] | null;
}

/** A selector error whose message is already in kube's words. */
class SelectorError extends Error {}

function fail(message: string): never {
  throw new SelectorError(message);
}

/** Turns SelectorErrors into the 400 kube-apiserver answers with the same text. */
function asBadRequest<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof SelectorError) throw badRequest(error.message);
    throw error;
  }
}

// ---------------------------------------------------------------------------
// Go-compatible ordering and rendering, so messages and canonical forms match.

/** Go compares strings bytewise; for UTF-8 that is code point order. */
function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const diff = (a.codePointAt(i) ?? 0) - (b.codePointAt(i) ?? 0);
    if (diff !== 0) return diff;
  }
  return a.length - b.length;
}

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

const GO_NAMED_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['\x07', '\\a'],
  ['\b', '\\b'],
  ['\f', '\\f'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
  ['\v', '\\v'],
  ['"', '\\"'],
  ['\\', '\\\\'],
]);

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space. */
const GO_PRINTABLE = /^[ \p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

function goQuoteChar(char: string): string {
  const named = GO_NAMED_ESCAPES.get(char);
  if (named !== undefined) return named;
  const codePoint = char.codePointAt(0) ?? 0;
  if (codePoint < 0x20 || codePoint === 0x7f) return `\\x${hex(codePoint, 2)}`;
  if (GO_PRINTABLE.test(char)) return char;
  return codePoint < 0x10000 ? `\\u${hex(codePoint, 4)}` : `\\U${hex(codePoint, 8)}`;
}

/** Go's %q, which field errors use to show a string value. */
export function goQuote(text: string): string {
  let quoted = '"';
  for (const char of text) quoted += goQuoteChar(char);
  return quoted + '"';
}

/**
 * A []string value as field errors render it (encoding/json). kube copies the
 * values with append(nil, ...), so an empty list is nil and renders as null.
 */
function goJsonList(values: readonly string[]): string {
  if (values.length === 0) return 'null';
  return JSON.stringify(values).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}

/** field.Invalid(...).Error(). */
function invalidValue(path: string, renderedValue: string, detail: string): string {
  return `${path}: Invalid value: ${renderedValue}: ${detail}`;
}

/** utilerrors.Aggregate's message: duplicates dropped, several in brackets. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

/** strconv.ParseInt(text, 10, 64); undefined where Go returns an error. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value : undefined;
}

// ---------------------------------------------------------------------------
// Label key and value validation (k8s.io/apimachinery/pkg/api/validate/content).

const LABEL_NAME_PATTERN = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_NAME = new RegExp(`^${LABEL_NAME_PATTERN}$`);
const LABEL_VALUE_PATTERN = `(${LABEL_NAME_PATTERN})?`;
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_PATTERN}$`);
const DNS_LABEL_PATTERN = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN_PATTERN = `${DNS_LABEL_PATTERN}(\\.${DNS_LABEL_PATTERN})*`;
const DNS_SUBDOMAIN = new RegExp(`^${DNS_SUBDOMAIN_PATTERN}$`);
const LABEL_NAME_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** kube's RegexError wording, double space before "or" included. */
function regexError(message: string, pattern: string, ...examples: string[]): string {
  const shown = examples.map((example) => `'${example}', `).join(' or ');
  return `${message} (e.g. ${shown}regex used for validation is '${pattern}')`;
}

function maxLengthError(length: number): string {
  return `must be no more than ${length} bytes`;
}

/** kube limits lengths in UTF-8 bytes, not characters. */
function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export function dnsSubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 253) errors.push(maxLengthError(253));
  if (!DNS_SUBDOMAIN.test(value)) errors.push(regexError(DNS_SUBDOMAIN_MESSAGE, DNS_SUBDOMAIN_PATTERN, 'example.com'));
  return errors;
}

function labelKeyPrefixErrors(prefix: string): string[] {
  if (prefix === '') return ['prefix part must be non-empty'];
  return dnsSubdomainErrors(prefix).map((error) => `prefix part ${error}`);
}

function labelKeyNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name === '') errors.push('name part must be non-empty');
  else if (byteLength(name) > 63) errors.push(`name part ${maxLengthError(63)}`);
  // An empty name also fails the pattern; kube reports both.
  if (!LABEL_NAME.test(name)) {
    errors.push(`name part ${regexError(LABEL_NAME_MESSAGE, LABEL_NAME_PATTERN, 'MyName', 'my.name', '123-abc')}`);
  }
  return errors;
}

/** content.IsLabelKey (a qualified name): `[dns-subdomain/]name`. */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  const [first = '', second] = parts;
  if (parts.length > 2) {
    const shape = regexError(LABEL_NAME_MESSAGE, LABEL_NAME_PATTERN, 'MyName', 'my.name', '123-abc');
    return [`a valid label key ${shape} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (second === undefined) return labelKeyNameErrors(first);
  return [...labelKeyPrefixErrors(first), ...labelKeyNameErrors(second)];
}

/** content.IsLabelValue. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 63) errors.push(maxLengthError(63));
  if (!LABEL_VALUE.test(value)) errors.push(regexError(LABEL_VALUE_MESSAGE, LABEL_VALUE_PATTERN, 'MyValue', 'my_value', '12345'));
  return errors;
}

// ---------------------------------------------------------------------------
// Label requirements (labels.Requirement).

/** kube's selection.Operator spellings, which appear in its messages. */
type Operator = 'exists' | '!' | '=' | '==' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

function valueCountErrors(operator: Operator, values: readonly string[]): string[] {
  const invalid = (detail: string): string[] => [invalidValue('values', goJsonList(values), detail)];
  switch (operator) {
    case 'in':
    case 'notin':
      return values.length === 0 ? invalid("for 'in', 'notin' operators, values set can't be empty") : [];
    case '=':
    case '==':
    case '!=':
      return values.length === 1 ? [] : invalid('exact-match compatibility requires one single value');
    case 'exists':
    case '!':
      return values.length === 0 ? [] : invalid('values set must be empty for exists and does not exist');
    case 'gt':
    case 'lt':
      return [
        ...(values.length === 1 ? [] : invalid("for 'Gt', 'Lt' operators, exactly one value is required")),
        ...values.flatMap((value, i) =>
          parseInt64(value) === undefined
            ? [invalidValue(`values[${i}]`, goQuote(value), "for 'Gt', 'Lt' operators, the value must be an integer")]
            : [],
        ),
      ];
  }
}

/** labels.NewRequirement's checks, as one aggregated message per requirement. */
function requirementErrors(key: string, operator: Operator, values: readonly string[]): string[] {
  const keyErrors = labelKeyErrors(key);
  return [
    ...(keyErrors.length === 0 ? [] : [invalidValue('key', goQuote(key), keyErrors.join('; '))]),
    ...valueCountErrors(operator, values),
    ...values.flatMap((value, i) => {
      const errors = labelValueErrors(value);
      return errors.length === 0 ? [] : [invalidValue(`values[${i}][${key}]`, goQuote(value), errors.join('; '))];
    }),
  ];
}

function lookup(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  // Own properties only: a label called "constructor" must not hit Object.prototype.
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** Gt/Lt compare as 64-bit integers and never match a label that is not one. */
function compareAsIntegers(operator: 'gt' | 'lt', label: string, bound: string | undefined): boolean {
  const left = parseInt64(label);
  const right = bound === undefined ? undefined : parseInt64(bound);
  if (left === undefined || right === undefined) return false;
  return operator === 'gt' ? left > right : left < right;
}

class Requirement {
  private constructor(
    readonly key: string,
    readonly operator: Operator,
    readonly values: readonly string[],
  ) {}

  static create(key: string, operator: Operator, values: readonly string[]): Requirement {
    const errors = requirementErrors(key, operator, values);
    if (errors.length > 0) fail(aggregate(errors));
    return new Requirement(key, operator, values);
  }

  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    const label = lookup(labels, this.key);
    switch (this.operator) {
      case 'in':
      case '=':
      case '==':
        return label !== undefined && this.values.includes(label);
      // Negative operators match objects that lack the label altogether.
      case 'notin':
      case '!=':
        return label === undefined || !this.values.includes(label);
      case 'exists':
        return label !== undefined;
      case '!':
        return label === undefined;
      case 'gt':
      case 'lt':
        return label !== undefined && this.values.length === 1 && compareAsIntegers(this.operator, label, this.values[0]);
    }
  }

  toString(): string {
    const values = [...this.values].sort(compareCodePoints).join(',');
    switch (this.operator) {
      case 'exists':
        return this.key;
      case '!':
        return `!${this.key}`;
      case '=':
      case '==':
      case '!=':
        return `${this.key}${this.operator}${values}`;
      case 'gt':
        return `${this.key}>${values}`;
      case 'lt':
        return `${this.key}<${values}`;
      case 'in':
      case 'notin':
        return `${this.key} ${this.operator} (${values})`;
    }
  }
}

class RequirementsSelector implements LabelSelector {
  private readonly requirements: readonly Requirement[];

  constructor(requirements: readonly Requirement[]) {
    // Sorted by key so equal selectors print the same (Array#sort is stable).
    this.requirements = [...requirements].sort((a, b) => compareCodePoints(a.key, b.key));
  }

  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    return this.requirements.every((requirement) => requirement.matches(labels));
  }

  isEverything(): boolean {
    return this.requirements.length === 0;
  }

  toString(): string {
    return this.requirements.join(',');
  }
}

// ---------------------------------------------------------------------------
// Label selector lexer (labels.Lexer).

type TokenKind = 'end' | 'identifier' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';

interface Token {
  readonly kind: TokenKind;
  readonly literal: string;
}

const LITERAL_TOKENS: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  ['in', 'in'],
  ['notin', 'notin'],
  ['(', '('],
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['=', '='],
  ['==', '=='],
  ['!=', '!='],
  ['>', '>'],
  ['<', '<'],
]);

const END: Token = { kind: 'end', literal: '' };
const NUL = 0;

function isWhitespace(char: number): boolean {
  return char === 0x20 || char === 0x09 || char === 0x0d || char === 0x0a;
}

function isSymbol(char: number): boolean {
  return '=!(),><'.includes(String.fromCharCode(char));
}

/**
 * Splits a label selector into tokens. Go's lexer reads bytes; all special
 * characters are ASCII, so scanning UTF-16 units splits text the same way.
 * Go also takes a NUL byte for end of input: at the start of a token it ends
 * the scan, right after a token it is swallowed and scanning goes on.
 */
class Lexer {
  private position = 0;

  constructor(private readonly text: string) {}

  tokens(): Token[] {
    const tokens: Token[] = [];
    for (let token = this.next(); ; token = this.next()) {
      tokens.push(token);
      if (token.kind === 'end') return tokens;
    }
  }

  /** The code unit at the cursor, or NUL past the end. */
  private peekChar(): number {
    return this.position < this.text.length ? this.text.charCodeAt(this.position) : NUL;
  }

  private next(): Token {
    while (isWhitespace(this.peekChar())) this.position++;
    if (this.peekChar() === NUL) return END;
    const token = isSymbol(this.peekChar()) ? this.scanSymbol() : this.scanWord();
    if (this.text.charCodeAt(this.position) === NUL) this.position++; // a NUL right after a token
    return token;
  }

  /** The longest operator at the cursor; only "==" and "!=" are two characters long. */
  private scanSymbol(): Token {
    const pair = this.text.slice(this.position, this.position + 2);
    const pairKind = pair.length === 2 ? LITERAL_TOKENS.get(pair) : undefined;
    const literal = pairKind === undefined ? pair.slice(0, 1) : pair;
    this.position += literal.length;
    return { kind: LITERAL_TOKENS.get(literal) ?? 'identifier', literal };
  }

  /** A key, value or the keywords in/notin: everything up to a symbol or blank. */
  private scanWord(): Token {
    const start = this.position;
    for (let char = this.peekChar(); char !== NUL && !isSymbol(char) && !isWhitespace(char); char = this.peekChar()) {
      this.position++;
    }
    const literal = this.text.slice(start, this.position);
    return { kind: LITERAL_TOKENS.get(literal) ?? 'identifier', literal };
  }
}

// ---------------------------------------------------------------------------
// Label selector parser (labels.Parser).

/** Tokens that may start a requirement. */
function startsRequirement(token: Token): boolean {
  return token.kind === 'identifier' || token.kind === '!';
}

const OPERATOR_TOKENS: ReadonlyMap<TokenKind, Operator> = new Map<TokenKind, Operator>([
  ['in', 'in'],
  ['notin', 'notin'],
  ['=', '='],
  ['==', '=='],
  ['!=', '!='],
  ['>', 'gt'],
  ['<', 'lt'],
]);

class LabelParser {
  private index = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    const first = this.peek();
    if (first.kind === 'end') return requirements;
    if (!startsRequirement(first)) fail(`found '${first.literal}', expected: !, identifier, or 'end of string'`);
    for (;;) {
      requirements.push(this.parseRequirementInContext());
      const separator = this.take();
      if (separator.kind === 'end') return requirements;
      if (separator.kind !== ',') fail(`found '${separator.literal}', expected: ',' or 'end of string'`);
      const next = this.peek();
      if (!startsRequirement(next)) fail(`found '${next.literal}', expected: identifier after ','`);
    }
  }

  /** kube prefixes every error raised inside one requirement. */
  private parseRequirementInContext(): Requirement {
    try {
      return this.parseRequirement();
    } catch (error) {
      if (error instanceof SelectorError) fail(`unable to parse requirement: ${error.message}`);
      throw error;
    }
  }

  private parseRequirement(): Requirement {
    const negated = this.peek().kind === '!';
    if (negated) this.take();
    const key = this.parseKey();
    if (negated) return Requirement.create(key, '!', []);
    const next = this.peek();
    if (next.kind === 'end' || next.kind === ',') return Requirement.create(key, 'exists', []);
    const operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValueSet() : [this.parseSingleValue()];
    return Requirement.create(key, operator, values);
  }

  private parseKey(): string {
    const token = this.take();
    if (token.kind !== 'identifier') fail(`found '${token.literal}', expected: identifier`);
    const errors = labelKeyErrors(token.literal);
    // kube validates the key with a nil field path, which prints as "<nil>".
    if (errors.length > 0) fail(invalidValue('<nil>', goQuote(token.literal), errors.join('; ')));
    return token.literal;
  }

  private parseOperator(): Operator {
    const token = this.takeRaw();
    const operator = OPERATOR_TOKENS.get(token.kind);
    if (operator === undefined) fail(`found '${token.literal}', expected: ${BINARY_OPERATORS}`);
    return operator;
  }

  /** `( values )` as a sorted set; "()" and stray commas stand for the empty value. */
  private parseValueSet(): string[] {
    const open = this.take();
    // kube's message lacks the colon here.
    if (open.kind !== '(') fail(`found '${open.literal}' expected: '('`);
    const first = this.peek();
    if (first.kind === ')') {
      this.take();
      return [''];
    }
    if (first.kind !== 'identifier' && first.kind !== ',') fail(`found '${first.literal}', expected: ',', ')' or identifier`);
    const values = this.parseValueList();
    this.take(); // the ')' that ended the list
    return [...values].sort(compareCodePoints);
  }

  /** Stops before the closing parenthesis. */
  private parseValueList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const token = this.take();
      if (token.kind === 'identifier') {
        values.add(token.literal);
        const next = this.peek();
        if (next.kind === ')') return values;
        if (next.kind !== ',') fail(`found '${next.literal}', expected: ',' or ')'`);
      } else if (token.kind === ',') {
        // A comma with nothing before it, after it, or next to another one adds "".
        const next = this.peek();
        if (values.size === 0 || next.kind === ')' || next.kind === ',') values.add('');
        if (next.kind === ')') return values;
      } else {
        fail(`found '${token.literal}', expected: ',', or identifier`);
      }
    }
  }

  /** The value after =, ==, !=, > or <; nothing at all means "". */
  private parseSingleValue(): string {
    const next = this.peek();
    if (next.kind === 'end' || next.kind === ',') return '';
    const token = this.take();
    if (token.kind !== 'identifier') fail(`found '${token.literal}', expected: identifier`);
    return token.literal;
  }

  /** Outside operator position, "in" and "notin" are plain words (`in in (notin)`). */
  private peek(): Token {
    return asWord(this.current());
  }

  private take(): Token {
    return asWord(this.takeRaw());
  }

  private takeRaw(): Token {
    const token = this.current();
    this.index++;
    return token;
  }

  private current(): Token {
    return this.tokens[Math.min(this.index, this.tokens.length - 1)] ?? END;
  }
}

function asWord(token: Token): Token {
  return token.kind === 'in' || token.kind === 'notin' ? { kind: 'identifier', literal: token.literal } : token;
}

/**
 * Parses a `labelSelector` query parameter like labels.Parse. The empty
 * string selects everything. Throws a 400 ApiError with kube's message.
 */
export function parseLabelSelector(text: string): LabelSelector {
  return asBadRequest(() => new RequirementsSelector(new LabelParser(new Lexer(text).tokens()).parse()));
}

// ---------------------------------------------------------------------------
// HostSelector (labels.NewRequirement on each term, as upstream's webhook validates).

const HOST_SELECTOR_OPERATORS: ReadonlySet<string> = new Set<Operator>(['in', 'notin', '=', '==', '!=', 'exists', '!']);

function requirementFromExpression(expression: HostSelectorRequirement): Requirement {
  // The operator comes from decoded JSON, so it may be anything.
  if (!HOST_SELECTOR_OPERATORS.has(expression.operator)) fail(`${goQuote(expression.operator)} is not a valid label selector operator`);
  return Requirement.create(expression.key, expression.operator as Operator, [...(expression.values ?? [])]);
}

/**
 * Converts a HostClaim's hostSelector into a matcher with kube's
 * validation (in/notin need values, exists/! take none, = == != exactly
 * one; keys and values must be valid). A missing or empty selector selects
 * every host. Throws a 400 ApiError with kube's message.
 */
export function labelSelectorFromHostSelector(selector: HostSelector | null | undefined): LabelSelector {
  const matchLabels = Object.entries(selector?.matchLabels ?? {}).sort(([a], [b]) => compareCodePoints(a, b));
  const expressions = selector?.matchExpressions ?? [];
  return asBadRequest(
    () =>
      new RequirementsSelector([
        ...matchLabels.map(([key, value]) => Requirement.create(key, '=', [value])),
        ...expressions.map(requirementFromExpression),
      ]),
  );
}

// ---------------------------------------------------------------------------
// Field selectors (fields.ParseSelector plus the CRD field label check).

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
