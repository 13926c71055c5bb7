/**
 * Go's `time.ParseDuration` (time/format.go), with its exact error texts:
 * kube-apiserver reads the `timeout` URL parameter and its own
 * `--request-timeout` flag with it, so a client's malformed value is
 * answered as kube answers it. Works on the UTF-8 bytes, as Go does.
 */
import { goTimeQuote } from './go-time.js';

const nanosecondsPer: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // micro sign
  ['\u03bcs', 1_000n], // Greek mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const limit = 1n << 63n;

export class GoDurationError extends Error {}

const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= 0x30 && byte <= 0x39;
const DOT = 0x2e;

function failure(kind: string, original: string): GoDurationError {
  return new GoDurationError(`time: ${kind} ${goTimeQuote(original)}`);
}

/** Nanoseconds, or a GoDurationError with Go's message. */
export function parseGoDuration(text: string): bigint {
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  let negative = false;
  if (bytes[0] === 0x2d || bytes[0] === 0x2b) {
    negative = bytes[0] === 0x2d;
    at = 1;
  }
  const rest = bytes.subarray(at);
  if (rest.length === 1 && rest[0] === 0x30) return 0n;
  if (rest.length === 0) throw failure('invalid duration', text);
  let total = 0n;
  while (at < bytes.length) {
    if (bytes[at] !== DOT && !isDigit(bytes[at])) throw failure('invalid duration', text);
    const whole = leadingInt(bytes, at);
    if (whole === undefined) throw failure('invalid duration', text);
    const pre = whole.end !== at;
    at = whole.end;
    let fraction = { value: 0n, scale: 1 };
    let post = false;
    if (bytes[at] === DOT) {
      const parsed = leadingFraction(bytes, at + 1);
      post = parsed.end !== at + 1;
      fraction = parsed;
      at = parsed.end;
    }
    if (!pre && !post) throw failure('invalid duration', text);
    let unitEnd = at;
    while (unitEnd < bytes.length && bytes[unitEnd] !== DOT && !isDigit(bytes[unitEnd])) unitEnd++;
    if (unitEnd === at) throw failure('missing unit in duration', text);
    const unitText = bytes.subarray(at, unitEnd).toString('utf8');
    const unit = nanosecondsPer.get(unitText);
    at = unitEnd;
    if (unit === undefined) throw failure(`unknown unit ${goTimeQuote(unitText)} in duration`, text);
    if (whole.value > limit / unit) throw failure('invalid duration', text);
    let value = whole.value * unit;
    if (fraction.value > 0n) {
      // float64, as Go computes it, for nanosecond accuracy on fractions of hours.
      value += BigInt(Math.trunc(Number(fraction.value) * (Number(unit) / fraction.scale)));
      if (value > limit) throw failure('invalid duration', text);
    }
    total += value;
    if (total > limit) throw failure('invalid duration', text);
  }
  if (negative) return -total;
  if (total > limit - 1n) throw failure('invalid duration', text);
  return total;
}

/** Go's leadingInt: undefined on overflow. */
function leadingInt(bytes: Buffer, start: number): { value: bigint; end: number } | undefined {
  let value = 0n;
  let at = start;
  for (; isDigit(bytes[at]); at++) {
    if (value > limit / 10n) return undefined;
    value = value * 10n + BigInt((bytes[at] ?? 0) - 0x30);
    if (value > limit) return undefined;
  }
  return { value, end: at };
}

/** Go's leadingFraction: digits past what fits are consumed and ignored. */
function leadingFraction(bytes: Buffer, start: number): { value: bigint; scale: number; end: number } {
  let value = 0n;
  let scale = 1;
  let overflow = false;
  let at = start;
  for (; isDigit(bytes[at]); at++) {
    if (overflow) continue;
    if (value > (limit - 1n) / 10n) {
      overflow = true;
      continue;
    }
    const next = value * 10n + BigInt((bytes[at] ?? 0) - 0x30);
    if (next > limit) {
      overflow = true;
      continue;
    }
    value = next;
    scale *= 10;
  }
  return { value, scale, end: at };
}
