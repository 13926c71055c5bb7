/** The assertion the selector tests share: a 400 BadRequest ApiError with kube's exact message. */
import { expect } from 'vitest';
import { ApiError } from '../../../src/api/status.js';

function thrown(action: () => unknown): ApiError {
  try {
    action();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

export function expectBadRequest(action: () => unknown, message: string): void {
  const error = thrown(action);
  expect(error.code).toBe(400);
  expect(error.reason).toBe('BadRequest');
  expect(error.message).toBe(message);
}
