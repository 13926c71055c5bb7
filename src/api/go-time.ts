/**
 * Go's `time.Parse(time.RFC3339, value)`, which is how metav1.Time decodes a
 * timestamp (k8s.io/apimachinery/pkg/apis/meta/v1/time.go UnmarshalJSON): the
 * errors, so a client's bad timestamp is answered with Go's exact text
 * (following the layout walk of Go's time/format.go for the one layout
 * "2006-01-02T15:04:05Z07:00"), and the instant a stored timestamp names.
 */

const layout = '2006-01-02T15:04:05Z07:00';

type Chunk = { readonly literal: string } | { readonly std: 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'zone'; readonly text: string };

const chunks: readonly Chunk[] = [
  { std: 'year', text: '2006' },
  { literal: '-' },
  { std: 'month', text: '01' },
  { literal: '-' },
  { std: 'day', text: '02' },
  { literal: 'T' },
  { std: 'hour', text: '15' },
  { literal: ':' },
  { std: 'minute', text: '04' },
  { literal: ':' },
  { std: 'second', text: '05' },
  { std: 'zone', text: 'Z07:00' },
];

/** Go's time.quote: ASCII printable as is (with " and \ escaped), other bytes as \xHH. */
export function goTimeQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code >= 0x80) {
      for (const byte of Buffer.from(char, 'utf8')) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    } else {
      out += char === '"' || char === '\\' ? `\\${char}` : char;
    }
  }
  return `${out}"`;
}

const isDigit = (text: string, index: number): boolean => index < text.length && text.charCodeAt(index) >= 48 && text.charCodeAt(index) <= 57;

/** getnum: one or two digits (exactly two when fixed). */
function getNumber(text: string, fixed: boolean): { value: number; rest: string } | undefined {
  if (!isDigit(text, 0)) return undefined;
  if (!isDigit(text, 1)) return fixed ? undefined : { value: Number(text[0]), rest: text.slice(1) };
  return { value: Number(text.slice(0, 2)), rest: text.slice(2) };
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The error text of time.Parse(time.RFC3339, value), or undefined when Go accepts the value. */
export function rfc3339ParseError(value: string): string | undefined {
  const cannotParse = (rest: string, element: string): string =>
    `parsing time ${goTimeQuote(value)} as ${goTimeQuote(layout)}: cannot parse ${goTimeQuote(rest)} as ${goTimeQuote(element)}`;
  const outOfRange = (what: string): string => `parsing time ${goTimeQuote(value)}: ${what} out of range`;
  let rest = value;
  let year = 0;
  let month = 0;
  let day = 0;
  for (const chunk of chunks) {
    if ('literal' in chunk) {
      if (!rest.startsWith(chunk.literal)) return cannotParse(rest, chunk.literal);
      rest = rest.slice(chunk.literal.length);
      continue;
    }
    const before = rest;
    switch (chunk.std) {
      case 'year': {
        const digits = rest.slice(0, 4);
        if (rest.length < 4 || !/^[+-]?\d+$/.test(digits)) return cannotParse(before, chunk.text);
        year = Number(digits);
        rest = rest.slice(4);
        break;
      }
      case 'zone': {
        if (rest.startsWith('Z')) {
          rest = rest.slice(1);
          break;
        }
        if (rest.length < 6 || rest[3] !== ':') return cannotParse(before, chunk.text);
        const sign = rest[0];
        const hours = getNumber(rest.slice(1, 3), true);
        const minutes = getNumber(rest.slice(4, 6), true);
        if (hours === undefined || minutes === undefined || (sign !== '+' && sign !== '-')) return cannotParse(before, chunk.text);
        if (hours.value > 24) return outOfRange('time zone offset hour');
        if (minutes.value > 60) return outOfRange('time zone offset minute');
        rest = rest.slice(6);
        break;
      }
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second': {
        const parsed = getNumber(rest, chunk.std !== 'hour');
        if (parsed === undefined) return cannotParse(before, chunk.text);
        rest = parsed.rest;
        const limits = { month: [1, 12], day: [1, 31], hour: [0, 23], minute: [0, 59], second: [0, 59] } as const;
        const [low, high] = limits[chunk.std];
        if (parsed.value < low || parsed.value > high) return outOfRange(chunk.std);
        if (chunk.std === 'month') month = parsed.value;
        if (chunk.std === 'day') day = parsed.value;
        // Fractional seconds are accepted after the seconds even though the layout has none.
        if (chunk.std === 'second' && rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigit(rest, 1)) {
          let end = 2;
          while (isDigit(rest, end)) end++;
          if (end - 1 > 9) return cannotParse(rest, rest.slice(0, end));
          rest = rest.slice(end);
        }
      }
    }
  }
  if (rest.length > 0) return `parsing time ${goTimeQuote(value)}: extra text: ${goTimeQuote(rest)}`;
  if (day > daysIn(month, year)) return outOfRange('day');
  return undefined;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * Go's time.Parse(time.RFC3339, s) as metav1.Time uses it, in epoch
 * milliseconds (fractions kept below the millisecond), or undefined.
 */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  if (year === undefined || month === undefined || day === undefined) return undefined;
  if (hour === undefined || minute === undefined || second === undefined) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(month, year)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const offHours = Number(m[10]);
    const offMinutes = Number(m[11]);
    if (offHours > 24 || offMinutes > 60) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offHours * 60 + offMinutes);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const fraction = m[7] === undefined ? 0 : Number(`0.${m[7]}`) * 1000;
  return date.getTime() + fraction - offsetMinutes * 60_000;
}
