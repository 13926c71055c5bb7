/**
 * Field selector tests. Most cases are ported from k8s.io/apimachinery's
 * pkg/fields/selector_test.go (v0.36.3); the expected error messages are
 * what fields.ParseSelector and the CRD field label check produce for the
 * same input.
 */
import { describe, expect, it } from 'vitest';
import { parseFieldSelector } from '../../../src/api/field-selector.js';
import { expectBadRequest } from './api-errors.js';

describe('parseFieldSelector', () => {
  const any = ['x', 'y', 'z', 'a', 'b', 'k', 'k2', 'foo', 'foobar', 'baz', 'complex', 'notin', '함', '목', '__proto__'];

  // TestSelectorParse, TestSplitTerms, TestEscapeValue and TestDeterministicParse.
  it.each([
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['', ''],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x=a||y\\=b', 'x=a||y\\=b'],
    ['x=a\\=\\=b', 'x=a\\=\\=b'],
    ['x==a', 'x=a'],
    ['x=a,a=x', 'a=x,x=a'],
    ['a=x,x=a', 'a=x,x=a'],
    // Raw terms are sorted bytewise, and '2' sorts before '='.
    ['k=\\,,k2=v2', 'k2=v2,k=\\,'],
    ['k=\\\\,k2=v2', 'k2=v2,k=\\\\'],
    ['k=\\\\\\,,k2=v2', 'k2=v2,k=\\\\\\,'],
    ['a=a,', 'a=a'],
    [',a=a', 'a=a'],
    [',,', ''],
    ['함=수,목=록', '목=록,함=수'],
    ['x=', 'x='],
    ['x!=', 'x!='],
    ['k=a!b', 'k=a!b'],
    // Terms with neither field nor value are dropped, as kube's identity transform does.
    ['=', ''],
    ['!=', ''],
    ['==,a=1', 'a=1'],
  ])('%j is %j', (input, canonical) => {
    const selector = parseFieldSelector(input, any);
    expect(selector.toString()).toBe(canonical);
    expect(selector.isEverything()).toBe(canonical === '');
  });

  it.each([
    ['x=a||y=b', 'invalid field selector: unescaped character in value: 61'],
    ['x==a==b', 'invalid field selector: unescaped character in value: 61'],
    ['x=a,b', "invalid selector: 'x=a,b'; can't understand 'b'"],
    ['x in (a)', "invalid selector: 'x in (a)'; can't understand 'x in (a)'"],
    ['x in (a,b,c)', "invalid selector: 'x in (a,b,c)'; can't understand 'b'"],
    ['x', "invalid selector: 'x'; can't understand 'x'"],
    ['k=\\a', 'invalid field selector: invalid escape sequence: \\a'],
    ['k=\\!', 'invalid field selector: invalid escape sequence: \\!'],
    ['k=\\', 'invalid field selector: invalid escape sequence: \\'],
    ['k=\\\\\\', 'invalid field selector: invalid escape sequence: \\'],
    ['k=\\😀', 'invalid field selector: invalid escape sequence: \\😀'],
    // Terms are sorted before parsing: the first bad term in sorted order is reported.
    ['z,y', "invalid selector: 'z,y'; can't understand 'y'"],
  ])('rejects %j', (input, message) => {
    expectBadRequest(() => parseFieldSelector(input, any), message);
  });

  it('reports unsupported fields with the CRD wording, after parse errors and in sorted order', () => {
    const supported = ['metadata.name', 'metadata.namespace'];
    expectBadRequest(() => parseFieldSelector('spec.foo=bar', supported), 'field label not supported: spec.foo');
    expectBadRequest(() => parseFieldSelector('metadata.name=a,b=1,a!=2', supported), 'field label not supported: a');
    expectBadRequest(() => parseFieldSelector('=x', supported), 'field label not supported: ');
    expectBadRequest(() => parseFieldSelector('!=,\\=', supported), 'field label not supported: \\');
    expectBadRequest(() => parseFieldSelector('a=1,zzz', supported), "invalid selector: 'a=1,zzz'; can't understand 'zzz'");
    expect(parseFieldSelector('metadata.namespace!=ns,metadata.name==a', supported).toString()).toBe(
      'metadata.name=a,metadata.namespace!=ns',
    );
  });

  // TestSelectorMatches.
  const fieldset = { foo: 'bar', baz: 'blah', complex: '=value\\,\\' };
  it.each<[string, Record<string, string>, boolean]>([
    ['', { x: 'y' }, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['foo=bar', fieldset, true],
    ['baz=blah', fieldset, true],
    ['foo=bar,baz=blah', fieldset, true],
    ['foo=bar,baz=blah,complex=\\=value\\\\\\,\\\\', fieldset, true],
    ['foo=blah', fieldset, false],
    ['baz=bar', fieldset, false],
    ['foo=bar,foobar=bar,baz=blah', fieldset, false],
    // A missing field reads as "".
    ['x=', {}, true],
    ['x!=', {}, false],
    ['x!=a', {}, true],
    ['x=a', {}, false],
    // Fields are looked up as own properties only.
    ['__proto__=', {}, true],
    ['__proto__=a', JSON.parse('{"__proto__":"a"}') as Record<string, string>, true],
  ])('%j on %j is %s', (selector, fields, expected) => {
    expect(parseFieldSelector(selector, any).matches(fields)).toBe(expected);
  });

  // TestRequiresExactMatch.
  it.each<[string, string, string | undefined]>([
    ['', 'test', undefined],
    ['a=b', 'test', undefined],
    ['test=b', 'test', 'b'],
    ['test==b', 'test', 'b'],
    ['test=', 'test', ''],
    ['test!=b', 'test', undefined],
    ['test!=', 'test', undefined],
    ['a=,test=b', 'test', 'b'],
    ['test=b,test=a', 'test', 'a'],
    ['test!=a,test=b', 'test', 'b'],
  ])('%j requires %j to be %j', (selector, field, value) => {
    expect(parseFieldSelector(selector, ['a', 'test']).requiresExactMatch(field)).toBe(value);
  });

  it('round-trips escaped values through toString', () => {
    const values = ['', 'a', '=', ',', '\\', '\\=\\,\\', 'a,b=c', '함,😀='];
    for (const value of values) {
      const selector = parseFieldSelector(`k=${value.replace(/[\\,=]/g, (c) => `\\${c}`)}`, ['k']);
      expect(selector.requiresExactMatch('k')).toBe(value);
      expect(parseFieldSelector(selector.toString(), ['k']).requiresExactMatch('k')).toBe(value);
      expect(selector.matches({ k: value })).toBe(true);
    }
  });
});
