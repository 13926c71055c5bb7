/**
 * YAML bodies, and JSON bodies too large to parse here, are decoded in a
 * worker thread (body-worker.ts), which also prunes fields the kind's
 * schema does not know: decoding and pruning 2 MB with 100,000 keys costs
 * 150–200 ms of CPU, and JSON.parse alone 150–300 ms on a busy machine;
 * either would hold the event loop, stalling every other tenant's
 * request, watch and the binder's Lease renewal. kube-apiserver decodes
 * each request on its own goroutine; this is the Node equivalent. One
 * worker, started on first use; requests queue on it, so decoding never
 * takes more than one core.
 */
import { Worker } from 'node:worker_threads';
import { ApiError, badRequest, internalError } from '../status.js';
import { bodyDecoderWorkerData, type BodyAnswer, type BodyRequest } from './body-worker.js';

export type DecodeOptions = Omit<BodyRequest, 'id' | 'text'>;

export type DecodedText = Omit<Extract<BodyAnswer, { json: string }>, 'id'>;

// Under vitest this module runs from its TypeScript source, and so does the worker (Node strips the types).
const workerFile = new URL(import.meta.url.endsWith('.ts') ? './body-worker.ts' : './body-worker.js', import.meta.url);
// The parser recurses per nesting level; this stack takes it well past maxDepth before a RangeError.
const workerStackMb = 16;

interface Pending {
  readonly resolve: (decoded: DecodedText) => void;
  readonly reject: (error: ApiError) => void;
}

class BodyDecoder {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  decode(text: string, options: DecodeOptions): Promise<DecodedText> {
    const id = this.nextId++;
    const request: BodyRequest = { id, text, ...options };
    return new Promise((resolve, reject) => {
      const worker = this.started();
      // Keeps the process alive only while a request waits on it.
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject });
      worker.postMessage(request);
    });
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(workerFile, { workerData: bodyDecoderWorkerData, resourceLimits: { stackSizeMb: workerStackMb } });
    worker.on('message', (answer: BodyAnswer) => {
      this.settle(answer);
    });
    worker.on('error', (error: Error) => {
      this.failAll(error);
    });
    worker.on('exit', () => {
      this.failAll(new Error('the YAML decoder stopped'));
    });
    this.worker = worker;
    return worker;
  }

  private settle(answer: BodyAnswer): void {
    const pending = this.pending.get(answer.id);
    if (pending === undefined) return;
    this.pending.delete(answer.id);
    if (this.pending.size === 0) this.worker?.unref();
    if ('json' in answer) pending.resolve(answer);
    else if (answer.failure === 'tooLarge') pending.reject(new ApiError(413, 'RequestEntityTooLarge', answer.message));
    else pending.reject(badRequest(answer.message));
  }

  private failAll(cause: Error): void {
    this.worker = undefined;
    for (const pending of this.pending.values()) {
      const error = internalError('the body could not be decoded');
      error.cause = cause;
      pending.reject(error);
    }
    this.pending.clear();
  }
}

const decoder = new BodyDecoder();

export function decodeOffThread(text: string, options: DecodeOptions): Promise<DecodedText> {
  return decoder.decode(text, options);
}
