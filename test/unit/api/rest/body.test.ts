import { describe, expect, it } from 'vitest';
import { duplicateFields } from '../../../../src/api/rest/body.js';

describe('duplicateFields', () => {
  it('finds repeated keys with kube-style paths, at any depth', () => {
    expect(duplicateFields('{"spec":{"poweredOn":true,"poweredOn":false}}')).toEqual(['spec.poweredOn']);
    expect(duplicateFields('{"a":[{"x":1},{"x":1,"x":2}],"a":null}')).toEqual(['a[1].x', 'a']);
    expect(duplicateFields('{"k":"a\\"b","s":"}{,[]","k":1}')).toEqual(['k']);
  });

  it('reports nothing for well-formed objects, arrays and scalars', () => {
    expect(duplicateFields('{"metadata":{"name":"x","labels":{"a":"1","b":"2"}},"list":[1,2,{"a":true}]}')).toEqual([]);
    expect(duplicateFields(' [ ] ')).toEqual([]);
    expect(duplicateFields('"text"')).toEqual([]);
  });
});
