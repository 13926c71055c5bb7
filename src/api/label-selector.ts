/**
 * Label selectors: the parser and matcher behind the `labelSelector` query
 * parameter of list, watch and deletecollection, and the conversion of a
 * HostClaim's hostSelector. Grammar, matching and error wording follow
 * k8s.io/apimachinery (labels.Parse, labels.NewRequirement,
 * metav1.LabelSelectorAsSelector), so clients get the same 400 messages from
 * us as from kube-apiserver.
 *
 * Deviations from kube (none affects which objects match):
 *  - kube sorts requirements with an unstable sort; with more than 12
 *    requirements sharing a key, its toString() may order them differently.
 *    We sort stably.
 *  - For metav1 selectors kube walks matchLabels in Go's random map order, so
 *    with several invalid entries the one reported varies; we report the
 *    first in key order.
 */
import { compareCodePoints, goJsonText, goQuote } from './go-strings.js';
import { END, Lexer, type Token, type TokenKind } from './label-selector-lexer.js';
import { labelKeyErrors, labelValueErrors } from './label-validation.js';
import { asBadRequest, fail, lookup, SelectorError } from './selector-common.js';

export interface LabelSelector {
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** True when the selector does not restrict anything. */
  isEverything(): boolean;
  /** Canonical form: requirements sorted by key, set values sorted. */
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

// ---------------------------------------------------------------------------
// Messages and integers as kube's Go code makes them.

/**
 * A []string value as field errors render it (encoding/json). kube copies the
 * values with append(nil, ...), so an empty list is nil and renders as null.
 */
function goJsonList(values: readonly string[]): string {
  return values.length === 0 ? 'null' : goJsonText(values);
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
