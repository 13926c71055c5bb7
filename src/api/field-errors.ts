/**
 * Field errors and the 422 Invalid Status built from them, worded like
 * k8s.io/apimachinery/pkg/util/validation/field and errors.NewInvalid.
 */
import { goQuote } from './go-strings.js';
import { ApiError, type StatusCause } from './status.js';

export type FieldErrorType = 'Required' | 'Forbidden' | 'Invalid' | 'NotSupported' | 'TooLong';

export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly detail: string;
  readonly value?: unknown;
}

const typeText: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Forbidden: 'Forbidden',
  Invalid: 'Invalid value',
  NotSupported: 'Unsupported value',
  TooLong: 'Too long',
};

const causeReason: Record<FieldErrorType, string> = {
  Required: 'FieldValueRequired',
  Forbidden: 'FieldValueForbidden',
  Invalid: 'FieldValueInvalid',
  NotSupported: 'FieldValueNotSupported',
  TooLong: 'FieldValueTooLong',
};

export function required(field: string, detail = ''): FieldError {
  return { type: 'Required', field, detail };
}

export function forbiddenField(field: string, detail: string): FieldError {
  return { type: 'Forbidden', field, detail };
}

export function invalidValue(field: string, value: unknown, detail: string): FieldError {
  return { type: 'Invalid', field, detail, value };
}

/** field.TooLong: the value is never shown. */
export function tooLong(field: string, maxBytes: number): FieldError {
  return { type: 'TooLong', field, detail: `may not be more than ${maxBytes} bytes` };
}

export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  return { type: 'NotSupported', field, value, detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` };
}

/** field.Error.ErrorBody(): "Type: detail", with the value quoted for value-carrying types. */
export function errorBody(error: FieldError): string {
  const carriesValue = error.type === 'Invalid' || error.type === 'NotSupported';
  const head = carriesValue ? `${typeText[error.type]}: ${renderValue(error.value)}` : typeText[error.type];
  return error.detail === '' ? head : `${head}: ${error.detail}`;
}

/** Go's rendering of a bad value: %q for strings, %v for numbers and booleans, JSON otherwise. */
function renderValue(value: unknown): string {
  return typeof value === 'string' ? goQuote(value) : JSON.stringify(value);
}

/** errors.NewInvalid: 422 with one cause per field error. */
export function invalid(group: string, kind: string, name: string, errors: readonly FieldError[]): ApiError {
  // ErrorList.ToAggregate drops repeated messages; the causes keep every error.
  const texts = [...new Set(errors.map((e) => `${e.field}: ${errorBody(e)}`))];
  const aggregate = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
  const qualified = group === '' ? kind : `${kind}.${group}`;
  const causes: StatusCause[] = errors.map((e) => ({ reason: causeReason[e.type], message: errorBody(e), field: e.field }));
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${aggregate}`, {
    ...(name === '' ? {} : { name }),
    ...(group === '' ? {} : { group }),
    ...(kind === '' ? {} : { kind }),
    causes,
  });
}
