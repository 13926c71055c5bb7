/**
 * Label selector tests. Most cases are ported from k8s.io/apimachinery's
 * pkg/labels/selector_test.go (v0.36.3); the expected error messages are
 * what labels.Parse and metav1.LabelSelectorAsSelector produce for the same
 * input.
 */
import { describe, expect, it } from 'vitest';
import { labelSelectorFromHostSelector, parseLabelSelector, type HostSelector } from '../../../src/api/label-selector.js';
import { expectBadRequest } from './api-errors.js';

const LABEL_NAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const DNS_SUBDOMAIN_RULE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const OPERATORS = 'in, notin, =, ==, !=, gt, lt';
const INTEGER_RULE = "for 'Gt', 'Lt' operators, the value must be an integer";

describe('parseLabelSelector: valid input', () => {
  // TestSelectorParse, TestSetSelectorParser and TestDeterministicParse.
  it.each([
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['', ''],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x=', 'x='],
    ['x= ', 'x='],
    ['x=,z= ', 'x=,z='],
    ['x= ,z= ', 'x=,z='],
    ['!x', '!x'],
    ['x>1', 'x>1'],
    ['x>1,z<5', 'x>1,z<5'],
    ['x==a', 'x==a'],
    ['\rx', 'x'],
    ['this-is-a-dns.domain.com/key-with-dash', 'this-is-a-dns.domain.com/key-with-dash'],
    ['this-is-another-dns.domain.com/key-with-dash in (so,what)', 'this-is-another-dns.domain.com/key-with-dash in (so,what)'],
    ['0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)', '0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)'],
    ['foo  in\t (abc)', 'foo in (abc)'],
    ['x notin\n (abc)', 'x notin (abc)'],
    ['x  notin\t\t(abc,def)', 'x notin (abc,def)'],
    ['x in (abc,def)', 'x in (abc,def)'],
    ['x in (def,abc)', 'x in (abc,def)'],
    ['x in (abc,)', 'x in (,abc)'],
    ['x in (abc,abc)', 'x in (abc)'],
    ['x in ()', 'x in ()'],
    ['x in (a,,)', 'x in (,a)'],
    ['x in (a,,,)', 'x in (,a)'],
    ['x in (a,,,,,,)', 'x in (,a)'],
    ['x in (a,,a,,a,,a,,)', 'x in (,a)'],
    ['x notin (abc,,def),bar,z in (),w', 'bar,w,x notin (,abc,def),z in ()'],
    ['x,y in (a)', 'x,y in (a)'],
    ['x=a,y!=b,z in (h,i,j)', 'x=a,y!=b,z in (h,i,j)'],
    ['x notin ( )', 'x notin ()'],
    ['x notin (, a)', 'x notin (,a)'],
    ['a ', 'a'],
    ['a in (x,y,notin, z,in)', 'a in (in,notin,x,y,z)'],
    ['x=a,a=x', 'a=x,x=a'],
    ['a=x,x=a', 'a=x,x=a'],
    ['in=notin,notin in (in)', 'in=notin,notin in (in)'],
    ['x=in', 'x=in'],
    ['b,a,!c,a=1', 'a,a=1,b,!c'],
    // Go's lexer swallows a NUL right after a token but stops at one that starts a token.
    ['x\u0000=1', 'x=1'],
    ['x=1,\u0000y', 'x=1,y'],
    ['x \u0000=1', 'x'],
  ])('%j is %j', (input, canonical) => {
    const selector = parseLabelSelector(input);
    expect(selector.toString()).toBe(canonical);
    expect(selector.isEverything()).toBe(canonical === '');
  });
});

describe('parseLabelSelector: invalid input', () => {
  it.each([
    // TestSelectorParse and TestSetSelectorParser bad strings.
    ['x=a||y=b', `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${LABEL_VALUE_RULE}`],
    ['x=a,,y=b', "found ',', expected: identifier after ','"],
    ['x=1, \u0000y', "found '', expected: identifier after ','"],
    ['x==a==b', "found '==', expected: ',' or 'end of string'"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    ['x<a', `unable to parse requirement: values[0]: Invalid value: "a": ${INTEGER_RULE}`],
    ['x,,y', "found ',', expected: identifier after ','"],
    [',x,y', "found ',', expected: !, identifier, or 'end of string'"],
    ['x nott in (y)', `unable to parse requirement: found 'nott', expected: ${OPERATORS}`],
    ['a in (xyz),', "found '', expected: identifier after ','"],
    ['a in (xyz)b notin ()', "found 'b', expected: ',' or 'end of string'"],
    ['a in (xyz abc)', "unable to parse requirement: found 'abc', expected: ',' or ')'"],
    ['a notin(', "unable to parse requirement: found '', expected: ',', ')' or identifier"],
    ['a (', `unable to parse requirement: found '(', expected: ${OPERATORS}`],
    ['(', "found '(', expected: !, identifier, or 'end of string'"],
    // TestParseOperator.
    ['x !', `unable to parse requirement: found '!', expected: ${OPERATORS}`],
    ['x exists', `unable to parse requirement: found 'exists', expected: ${OPERATORS}`],
    // More grammar errors.
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!!x', "unable to parse requirement: found '!', expected: identifier"],
    ['x in', "unable to parse requirement: found '' expected: '('"],
    ['x in a', "unable to parse requirement: found 'a' expected: '('"],
    ['x in ((', "unable to parse requirement: found '(', expected: ',', ')' or identifier"],
    ['x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['x in (a,', "unable to parse requirement: found '', expected: ',', or identifier"],
    ['x=(', "unable to parse requirement: found '(', expected: identifier"],
    ['x>=1', "unable to parse requirement: found '=', expected: identifier"],
    ['x=a b', "found 'b', expected: ',' or 'end of string'"],
    [')', "found ')', expected: !, identifier, or 'end of string'"],
  ])('%j', (input, message) => {
    expectBadRequest(() => parseLabelSelector(input), message);
  });

  it.each([
    ['a_', `"a_": name part ${LABEL_NAME_RULE}`],
    ['a'.repeat(64), `"${'a'.repeat(64)}": name part must be no more than 63 bytes`],
    ['é', `"é": name part ${LABEL_NAME_RULE}`],
    ['a"b', `"a\\"b": name part ${LABEL_NAME_RULE}`],
    ['a\u0001b', `"a\\x01b": name part ${LABEL_NAME_RULE}`],
    ['a\u00a0b', `"a\\u00a0b": name part ${LABEL_NAME_RULE}`],
    ['/a', '"/a": prefix part must be non-empty'],
    ['a/', `"a/": name part must be non-empty; name part ${LABEL_NAME_RULE}`],
    ['Example.com/a', `"Example.com/a": prefix part ${DNS_SUBDOMAIN_RULE}`],
    [
      'a/b/c',
      `"a/b/c": a valid label key ${LABEL_NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
  ])('rejects the key %j with a nil field path, as kube does', (key, detail) => {
    expectBadRequest(() => parseLabelSelector(`${key} in (a)`), `unable to parse requirement: <nil>: Invalid value: ${detail}`);
  });

  it.each([
    ['x=a_', `values[0][x]: Invalid value: "a_": ${LABEL_VALUE_RULE}`],
    ['x!=-a', `values[0][x]: Invalid value: "-a": ${LABEL_VALUE_RULE}`],
    [`x=${'a'.repeat(64)}`, `values[0][x]: Invalid value: "${'a'.repeat(64)}": must be no more than 63 bytes`],
    [
      'x in (b_,a_)',
      `[values[0][x]: Invalid value: "a_": ${LABEL_VALUE_RULE}, values[1][x]: Invalid value: "b_": ${LABEL_VALUE_RULE}]`,
    ],
    ['x<a_', `[values[0]: Invalid value: "a_": ${INTEGER_RULE}, values[0][x]: Invalid value: "a_": ${LABEL_VALUE_RULE}]`],
    ['x>99999999999999999999', `values[0]: Invalid value: "99999999999999999999": ${INTEGER_RULE}`],
    ['x>1.5', `values[0]: Invalid value: "1.5": ${INTEGER_RULE}`],
    ['x>', `values[0]: Invalid value: "": ${INTEGER_RULE}`],
  ])('rejects the values of %j', (input, detail) => {
    expectBadRequest(() => parseLabelSelector(input), `unable to parse requirement: ${detail}`);
  });
});

describe('LabelSelector.matches', () => {
  // TestSelectorMatches and TestRequirementSelectorMatching.
  it.each<[string, Record<string, string> | undefined, boolean]>([
    ['', { x: 'y' }, true],
    ['', undefined, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x', { x: 'z' }, true],
    ['!x', { y: 'z' }, true],
    ['x>1', { x: '2' }, true],
    ['x<1', { x: '0' }, true],
    ['x=z', {}, false],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['x', { y: 'z' }, false],
    ['!x', { x: 'z' }, false],
    ['x>1', { x: '0' }, false],
    ['x<1', { x: '2' }, false],
    ['foo=bar', { foo: 'bar', baz: 'blah' }, true],
    ['baz=blah', { foo: 'bar', baz: 'blah' }, true],
    ['foo=bar,baz=blah', { foo: 'bar', baz: 'blah' }, true],
    ['foo=blah', { foo: 'bar', baz: 'blah' }, false],
    ['baz=bar', { foo: 'bar', baz: 'blah' }, false],
    ['foo=bar,foobar=bar,baz=blah', { foo: 'bar', baz: 'blah' }, false],
    ['x in (foo),y notin (alpha)', { x: 'foo', y: 'baz' }, true],
    ['x in (foo),y in (alpha)', { x: 'foo', y: 'baz' }, false],
    ['x notin (),y', { y: '' }, true],
    ['!x,y', { y: '' }, true],
    ['x notin (),!y', { y: '' }, false],
    ['x in ()', { y: 'baz' }, false],
    ['x in ()', { x: '' }, true],
    ['z>1', { z: '2' }, true],
    ['z>1', { z: 'v2' }, false],
    // Negative operators match objects without the label.
    ['x!=y', undefined, true],
    ['x notin (a)', {}, true],
    ['!x', undefined, true],
    ['x', undefined, false],
    ['x=', {}, false],
    ['x=', { x: '' }, true],
    // Gt/Lt compare 64-bit integers; anything else never matches.
    ['x<1', { x: '-1' }, true],
    ['x>1', { x: '+5' }, true],
    ['x>1', { x: '05' }, true],
    ['x>1', { x: '1' }, false],
    ['x<1', {}, false],
    ['x>9223372036854775806', { x: '9223372036854775807' }, true],
    ['x>1', { x: '9223372036854775808' }, false],
    ['x<1', { x: '-9223372036854775808' }, true],
    ['x<1', { x: '-9223372036854775809' }, false],
    ['x>1', { x: '2.5' }, false],
    // Labels are looked up as own properties only.
    ['constructor', {}, false],
    ['!toString', {}, true],
  ])('%j on %j is %s', (selector, labels, expected) => {
    expect(parseLabelSelector(selector).matches(labels)).toBe(expected);
  });
});

describe('parseLabelSelector: generated cases', () => {
  const values = ['', '0', '1', '2', 'a'];
  const labelSets: Record<string, string>[] = [{}, ...values.map((x) => ({ x })), ...values.map((x) => ({ x, y: x }))];
  const requirements = [
    'x',
    '!x',
    ...values.flatMap((v) => [`x=${v}`, `x==${v}`, `x!=${v}`, `x in (${v})`, `x notin (${v})`]),
    ...['0', '1', '10'].flatMap((v) => [`x>${v}`, `x<${v}`]),
  ];

  it('negated operators are exact complements', () => {
    for (const labels of labelSets) {
      const has = (selector: string): boolean => parseLabelSelector(selector).matches(labels);
      expect(has('!x')).toBe(!has('x'));
      for (const v of values) {
        expect(has(`x!=${v}`)).toBe(!has(`x=${v}`));
        expect(has(`x notin (${v})`)).toBe(!has(`x in (${v})`));
        expect(has(`x==${v}`)).toBe(has(`x=${v}`));
        expect(has(`x in (${v},z)`)).toBe(has(`x=${v}`) || has('x=z'));
      }
    }
  });

  it('a conjunction matches when every requirement matches, and the canonical form round-trips', () => {
    for (const first of requirements) {
      for (const second of requirements) {
        const both = parseLabelSelector(`${first},${second}`);
        expect(parseLabelSelector(both.toString()).toString()).toBe(both.toString());
        for (const labels of labelSets) {
          const expected = parseLabelSelector(first).matches(labels) && parseLabelSelector(second).matches(labels);
          expect(both.matches(labels)).toBe(expected);
        }
      }
    }
  });
});

describe('labelSelectorFromHostSelector', () => {
  it('selects every host for a missing or empty selector', () => {
    for (const empty of [undefined, null, {}, { matchLabels: {}, matchExpressions: [] }]) {
      const selector = labelSelectorFromHostSelector(empty);
      expect(selector.isEverything()).toBe(true);
      expect(selector.matches(undefined)).toBe(true);
      expect(selector.toString()).toBe('');
    }
  });

  it('accepts the exact-match operators with one value', () => {
    const selector = labelSelectorFromHostSelector({ matchExpressions: [{ key: 'a', operator: '==', values: ['x'] }, { key: 'b', operator: '!=', values: ['y'] }] });
    expect(selector.matches({ a: 'x' })).toBe(true);
    expect(selector.matches({ a: 'x', b: 'y' })).toBe(false);
    expectBadRequest(() => labelSelectorFromHostSelector({ matchExpressions: [{ key: 'a', operator: '=', values: ['x', 'y'] }] }), 'values: Invalid value: ["x","y"]: exact-match compatibility requires one single value');
  });

  it.each<[HostSelector, string, Record<string, string>, boolean]>([
    [{ matchLabels: { b: '2', a: '1' } }, 'a=1,b=2', { a: '1', b: '2', c: '3' }, true],
    [{ matchLabels: { b: '2', a: '1' } }, 'a=1,b=2', { a: '1' }, false],
    [
      {
        matchExpressions: [
          { key: 'd', operator: 'notin', values: ['z'] },
          { key: 'a', operator: 'in', values: ['y', 'x'] },
          { key: 'b', operator: '!' },
          { key: 'c', operator: 'exists', values: [] },
        ],
      },
      'a in (x,y),!b,c,d notin (z)',
      { a: 'y', c: '' },
      true,
    ],
    [{ matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] }, 'a in (x)', { a: 'z' }, false],
    [{ matchExpressions: [{ key: 'a', operator: 'notin', values: ['x'] }] }, 'a notin (x)', {}, true],
    [
      { matchLabels: { a: '1' }, matchExpressions: [{ key: 'a', operator: 'exists' }] },
      'a=1,a',
      { a: '1' },
      true,
    ],
  ])('%j is %j', (input, canonical, labels, expected) => {
    const selector = labelSelectorFromHostSelector(input);
    expect(selector.toString()).toBe(canonical);
    expect(selector.matches(labels)).toBe(expected);
    expect(selector.isEverything()).toBe(false);
  });

  // TestRequirementConstructor and TestValidatedSelectorFromSet, through LabelSelectorAsSelector.
  it.each<[HostSelector, string]>([
    [
      { matchExpressions: [{ key: 'x1', operator: 'in' }] },
      "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      { matchExpressions: [{ key: 'x2', operator: 'notin', values: [] }] },
      "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      { matchExpressions: [{ key: 'x8', operator: 'exists', values: ['foo'] }] },
      'values: Invalid value: ["foo"]: values set must be empty for exists and does not exist',
    ],
    [
      { matchExpressions: [{ key: 'x9', operator: '!', values: ['a', 'b'] }] },
      'values: Invalid value: ["a","b"]: values set must be empty for exists and does not exist',
    ],
    [
      { matchExpressions: [{ key: 'a'.repeat(254), operator: 'exists' }] },
      `key: Invalid value: "${'a'.repeat(254)}": name part must be no more than 63 bytes`,
    ],
    [
      { matchLabels: { Key: 'axahm2EJ8Phiephe2eixohbee9eGeiyees1thuozi1xoh0GiuH3diewi8iem7Nui' } },
      'values[0][Key]: Invalid value: "axahm2EJ8Phiephe2eixohbee9eGeiyees1thuozi1xoh0GiuH3diewi8iem7Nui": must be no more than 63 bytes',
    ],
    [{ matchLabels: { x17: 'a b' } }, `values[0][x17]: Invalid value: "a b": ${LABEL_VALUE_RULE}`],
    [{ matchLabels: { b: 'a b', a: 'c d' } }, `values[0][a]: Invalid value: "c d": ${LABEL_VALUE_RULE}`],
    [{ matchLabels: { 'a/b/c': 'v' } }, `key: Invalid value: "a/b/c": a valid label key ${LABEL_NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`],
    [
      { matchExpressions: [{ key: 'k_', operator: 'in', values: ['ok', 'b_'] }] },
      `[key: Invalid value: "k_": name part ${LABEL_NAME_RULE}, values[1][k_]: Invalid value: "b_": ${LABEL_VALUE_RULE}]`,
    ],
    [
      { matchExpressions: [{ key: 'k', operator: 'exists', values: ['<a>'] }] },
      `[values: Invalid value: ["\\u003ca\\u003e"]: values set must be empty for exists and does not exist, values[0][k]: Invalid value: "<a>": ${LABEL_VALUE_RULE}]`,
    ],
    [
      { matchExpressions: [{ key: 'k', operator: 'Equals', values: ['a'] }] },
      '"Equals" is not a valid label selector operator',
    ],
  ])('rejects %j', (input, message) => {
    expectBadRequest(() => labelSelectorFromHostSelector(input), message);
  });
});
