/**
 * YAML bodies are decoded in a worker thread (yaml-worker.ts): parsing YAML
 * costs about a microsecond per byte, so a 3 MiB body would hold the event
 * loop for seconds, stalling every other tenant's request, watch and the
 * binder's Lease renewal. kube-apiserver decodes each request on its own
 * goroutine; this is the Node equivalent. One worker, started on first use;
 * requests queue on it, so YAML decoding never takes more than one core.
 */
import { Worker } from 'node:worker_threads';
import { ApiError, badRequest, internalError } from '../status.js';
import type { YamlAnswer, YamlRequest } from './yaml-worker.js';

export interface YamlLimits {
  readonly maxDepth: number;
  /** The decoded document as JSON (aliases expanded) may not exceed this. */
  readonly maxOutputBytes: number;
}

export interface DecodedYaml {
  /** The document as JSON text, for JSON.parse on this thread. */
  readonly json: string;
  /** goyaml's strict-decoding complaints about repeated keys (`line 3: key "a" already set in map`). */
  readonly duplicates: readonly string[];
}

// Under vitest this module runs from its TypeScript source, and so does the worker (Node strips the types).
const workerFile = new URL(import.meta.url.endsWith('.ts') ? './yaml-worker.ts' : './yaml-worker.js', import.meta.url);
// The parser recurses per nesting level; this stack takes it well past maxDepth before a RangeError.
const workerStackMb = 16;

interface Pending {
  readonly resolve: (decoded: DecodedYaml) => void;
  readonly reject: (error: ApiError) => void;
}

class YamlDecoder {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  decode(text: string, limits: YamlLimits): Promise<DecodedYaml> {
    const id = this.nextId++;
    const request: YamlRequest = { id, text, ...limits };
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
    const worker = new Worker(workerFile, { resourceLimits: { stackSizeMb: workerStackMb } });
    worker.on('message', (answer: YamlAnswer) => {
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

  private settle(answer: YamlAnswer): void {
    const pending = this.pending.get(answer.id);
    if (pending === undefined) return;
    this.pending.delete(answer.id);
    if (this.pending.size === 0) this.worker?.unref();
    if ('json' in answer) pending.resolve({ json: answer.json, duplicates: answer.duplicates });
    else if (answer.failure === 'tooLarge') pending.reject(new ApiError(413, 'RequestEntityTooLarge', answer.message));
    else pending.reject(badRequest(`error decoding YAML: ${answer.message}`));
  }

  private failAll(cause: Error): void {
    this.worker = undefined;
    for (const pending of this.pending.values()) {
      const error = internalError('the YAML body could not be decoded');
      error.cause = cause;
      pending.reject(error);
    }
    this.pending.clear();
  }
}

const decoder = new YamlDecoder();

export function decodeYamlOffThread(text: string, limits: YamlLimits): Promise<DecodedYaml> {
  return decoder.decode(text, limits);
}
