import { describe, expect, it } from 'vitest';
import { dependencyFailure } from '../../../../src/backing/errors.js';
import { KubeUnavailableError } from '../../../../src/backing/kube-client.js';
import { ApiError, badRequest, internalError } from '../../../../src/api/status.js';
import { failureLogLine } from '../../../../src/server/filters/errors.js';

describe('what is logged of a request error beside its request line', () => {
  it('logs an unexpected error (our bug) and a deliberate 500 at error level, with the error itself', () => {
    const bug = new TypeError('cannot read properties of undefined');
    expect(failureLogLine(bug, internalError('an unexpected error occurred'))).toEqual({ level: 'error', message: 'request failed', fields: { err: bug } });
    const storage = internalError('storage request failed');
    expect(failureLogLine(storage, storage)).toMatchObject({ level: 'error', message: 'request failed', fields: { err: storage } });
  });

  it('logs a dependency failure as a warning with its cause, without a stack', () => {
    const failure = dependencyFailure(new KubeUnavailableError(true, { cause: new Error('no answer within 30000 ms') }), 'storage');
    expect(failure?.code).toBe(504);
    const line = failureLogLine(failure, failure!);
    expect(line).toEqual({
      level: 'warn',
      message: 'request failed: a dependency did not answer',
      fields: { code: 504, cause: 'kube-apiserver did not answer in time: no answer within 30000 ms' },
    });
  });

  it('logs nothing more for a 5xx the server means, nor for a client error', () => {
    const tooLarge = new ApiError(504, 'Timeout', 'Timeout: Too large resource version: 99, current: 10', {});
    expect(failureLogLine(tooLarge, tooLarge)).toBeUndefined();
    const bad = badRequest('invalid');
    expect(failureLogLine(bad, bad)).toBeUndefined();
  });
});
