/**
 * How the body-decoder worker's modules refuse a body: body-worker.ts
 * answers a BodyError with its failure and message.
 */
export type BodyFailure = 'invalid' | 'tooLarge';

// No parameter properties in the worker's modules: Node's type stripping runs them as they are in tests.
export class BodyError extends Error {
  readonly failure: BodyFailure;
  constructor(failure: BodyFailure, message: string) {
    super(message);
    this.failure = failure;
  }
}

/** What every YAML decoding error begins with. */
export const yamlFailure = 'error decoding YAML: ';
