import { describe, expect, it } from 'vitest';
import { boundedWarnings, headerBytes } from '../../../../src/api/rest/warnings.js';

const header = (text: string): string => `299 - ${JSON.stringify(text)}`;

describe('boundedWarnings (kube-apiserver filters/warning.go recorder)', () => {
  it('keeps warnings within 4 KiB as they are, each text once', () => {
    expect(boundedWarnings([header('a'), header('b'), header('a'), '299 - ""'])).toEqual([header('a'), header('b')]);
  });

  it('past 4 KiB cuts every text to 256 runes and stops once 4 KiB is written again', () => {
    const long = (i: number): string => `${i}:${'é'.repeat(1000)}`;
    const result = boundedWarnings(Array.from({ length: 40 }, (_, i) => header(long(i))));
    // 4096 / 256 = 16 cut texts fill the budget again.
    expect(result).toEqual(Array.from({ length: 16 }, (_, i) => header(Array.from(long(i)).slice(0, 256).join(''))));
  });

  it('bounds 100,000 unknown-field warnings to a few kilobytes', () => {
    const result = boundedWarnings(Array.from({ length: 100_000 }, (_, i) => header(`unknown field "spec.k${i}"`)));
    const texts = result.map((h) => JSON.parse(h.slice('299 - '.length)) as string);
    expect(texts[0]).toBe('unknown field "spec.k0"');
    expect(texts.join('').length).toBeLessThanOrEqual(4096 + 256);
    expect(texts.join('').length).toBeGreaterThan(4096 - 64);
  });
});

describe('headerBytes', () => {
  it('hands a header\'s UTF-8 bytes over one per character, as Go writes them', () => {
    const header = '299 - "unknown field \\"spec.k\ufffd\\""';
    const value = headerBytes(header);
    expect(Buffer.from(value, 'latin1').toString('latin1')).toBe(value);
    expect(Buffer.from(value, 'latin1').toString('utf8')).toBe(header);
    expect(headerBytes('299 - "plain"')).toBe('299 - "plain"');
  });
});
