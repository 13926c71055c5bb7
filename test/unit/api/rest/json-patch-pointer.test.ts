import { describe, expect, it } from 'vitest';
import { asKubePointer } from '../../../../src/api/rest/json-patch-pointer.js';

describe("asKubePointer: a JSON patch pointer as kube's library (evanphx/json-patch v4 findObject) reads it", () => {
  it.each([
    ['/spec/image', 'add', '/spec/image'],
    ['/', 'add', '/'],
    ['/a~1b/c~0d', 'replace', '/a~1b/c~0d'],
    // The first segment is skipped whatever it holds.
    ['metadata/name', 'add', '/name'],
    ['x/spec/image', 'remove', '/spec/image'],
    // Nothing to split: the operation reaches nothing.
    ['', 'move', undefined],
    ['', 'add', undefined],
    ['spec', 'remove', undefined],
    // test compares the whole document for "".
    ['', 'test', ''],
  ])('%j (%s) is %j', (pointer, op, expected) => {
    expect(asKubePointer(pointer, op)).toBe(expected);
  });
});
