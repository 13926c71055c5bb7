/** Assertions the API tests share on thrown ApiErrors. */
import { expect } from 'vitest';
import { ApiError } from '../../../src/api/status.js';

/** The ApiError `fn` throws; anything else thrown propagates, nothing thrown fails the test. */
export function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

/** A 400 BadRequest with kube's exact message. */
export function expectBadRequest(action: () => unknown, message: string): void {
  const error = apiError(action);
  expect(error.code).toBe(400);
  expect(error.reason).toBe('BadRequest');
  expect(error.message).toBe(message);
}
