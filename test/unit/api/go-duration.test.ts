import { describe, expect, it } from 'vitest';
import { GoDurationError, parseGoDuration } from '../../../src/api/go-duration.js';

/**
 * Expected values printed by Go 1.26's time.ParseDuration for the same
 * inputs: a nanosecond count ('…n'), or Go's error text.
 */
const GO: readonly (readonly [string, string])[] = [
  ["1s", '1000000000n'],
  ["1m0s", '60000000000n'],
  ["0", '0n'],
  ["", "time: invalid duration \"\""],
  ["-1s", '-1000000000n'],
  ["+5m", '300000000000n'],
  ["1.5h", '5400000000000n'],
  ["1h30m", '5400000000000n'],
  ["1", "time: missing unit in duration \"1\""],
  ["abc", "time: invalid duration \"abc\""],
  ["1x", "time: unknown unit \"x\" in duration \"1x\""],
  ["1.s", '1000000000n'],
  [".5s", '500000000n'],
  ["1..5s", "time: missing unit in duration \"1..5s\""],
  [".s", "time: invalid duration \".s\""],
  ["9223372036854775807ns", '9223372036854775807n'],
  ["9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\""],
  ["2562047h", '9223369200000000000n'],
  ["2562048h", "time: invalid duration \"2562048h\""],
  ["1µs", '1000n'],
  ["1μs", '1000n'],
  ["1us", '1000n'],
  ["10ms", '10000000n'],
  ["0.000000001s", '1n'],
  ["1.0000000001s", '1000000000n'],
  ["3s2", "time: missing unit in duration \"3s2\""],
  ["s", "time: invalid duration \"s\""],
  ["-", "time: invalid duration \"-\""],
  ["+", "time: invalid duration \"+\""],
  ["5m-3s", "time: unknown unit \"m-\" in duration \"5m-3s\""],
  ["1e3s", "time: unknown unit \"e\" in duration \"1e3s\""],
  ["0s", '0n'],
  ["00", "time: missing unit in duration \"00\""],
  ["-0", '0n'],
  ["99999999999999999999s", "time: invalid duration \"99999999999999999999s\""],
  ["1h\u0000", "time: unknown unit \"h\\x00\" in duration \"1h\\x00\""],
  ["é", "time: invalid duration \"\\xc3\\xa9\""],
  ["1é", "time: unknown unit \"\\xc3\\xa9\" in duration \"1\\xc3\\xa9\""],
  ["+.1m", '6000000000n'],
  ["30 s", "time: unknown unit \" s\" in duration \"30 s\""],
  ["1constructor", "time: unknown unit \"constructor\" in duration \"1constructor\""],
  ["1__proto__", "time: unknown unit \"__proto__\" in duration \"1__proto__\""],
  ["-9223372036854775808ns", '-9223372036854775808n'],
  ["0.5h0.5m", '1830000000000n'],
  [".123456789123456789h", '444444440844n'],
  ["1.5µs", '1500n'],
];

describe('parseGoDuration (Go time.ParseDuration)', () => {
  it.each(GO)('%j → %s', (input, expected) => {
    if (expected.startsWith('time: ')) {
      expect(() => parseGoDuration(input)).toThrow(new GoDurationError(expected));
    } else {
      expect(parseGoDuration(input).toString()).toBe(expected.slice(0, -1));
    }
  });
});
