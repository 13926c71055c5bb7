/**
 * GETs in a loop beside hostile requests, timed on a worker thread: the
 * test's own thread builds and parses megabyte bodies, which would delay
 * reading an answer and count against the server. GETs go to the server's
 * port on one kept-alive connection, so what a GET waits for is the
 * server, not kube-apiserver or a TLS handshake; and each GET carries how
 * long the server's event-loop thread (or the loop's own) waited for a CPU
 * meanwhile, which on a loaded machine is not the server's doing.
 */
import { Worker } from 'node:worker_threads';
import type { GetLoopMessage, GetTarget, TimedGet } from './get-loop-worker.js';

export type { GetTarget, TimedGet } from './get-loop-worker.js';

/** The time in ms since the epoch, comparable with the loop thread's. */
export const now = (): number => performance.timeOrigin + performance.now();

/** What a GET waited for the server: its time less the machine's share (see TimedGet.cpuWait). */
export const serverWait = (get: TimedGet): number => get.end - get.start - get.cpuWait;

export interface GetLoop {
  /** The GETs in flight at some time between `from` and `to`, once the loop has sent one after `to`. */
  during(from: number, to: number): Promise<TimedGet[]>;
  /** Stops the loop; every GET it made. */
  stop(): Promise<TimedGet[]>;
}

export function startGetLoop(target: GetTarget): GetLoop {
  const worker = new Worker(new URL('./get-loop-worker.ts', import.meta.url), { workerData: target });
  const gets: TimedGet[] = [];
  const waiters: { readonly after: number; readonly resolve: () => void }[] = [];
  let stopped: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const wake = (time: number) => {
    for (const waiter of waiters.filter((w) => time > w.after)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  worker.on('message', (message: GetLoopMessage) => {
    if ('get' in message) {
      gets.push(message.get);
      wake(message.get.start);
    } else {
      wake(Infinity);
      stopped();
    }
  });
  worker.on('error', (error) => {
    gets.push({ start: now(), end: now(), status: -1, cpuWait: 0 });
    console.error('GET loop failed', error);
    wake(Infinity);
    stopped();
  });
  return {
    async during(from, to) {
      if (!gets.some((get) => get.start > to)) await new Promise<void>((resolve) => waiters.push({ after: to, resolve }));
      return gets.filter((get) => get.start <= to && get.end >= from);
    },
    async stop() {
      worker.postMessage('stop');
      await finished;
      await worker.terminate();
      return gets;
    },
  };
}
