/**
 * A loop of GETs on a thread of its own (see get-loop.ts): node built-ins
 * only, as Node loads it with its types stripped.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';

export interface GetTarget {
  readonly host: string;
  readonly port: number;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly servername: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[]>>;
  /** Between two GETs, so that the loop itself is a light load. */
  readonly pauseMs: number;
  /** The server's process: its event-loop thread's time waiting for a CPU is read around each GET. */
  readonly serverPid: number;
}

/** One GET: when it was sent and when its last byte arrived (ms since the epoch, either thread's clock), its status. */
export interface TimedGet {
  readonly start: number;
  readonly end: number;
  readonly status: number;
  /**
   * How long, meanwhile, the server's event-loop thread or this thread was ready to run but waited for a CPU
   * (the larger of the two, from the kernel's schedstat; 0 where there is none): the machine's share of the wait.
   */
  readonly cpuWait: number;
}

export type GetLoopMessage = { readonly get: TimedGet } | { readonly stopped: true };

const now = (): number => performance.timeOrigin + performance.now();
const target = workerData as GetTarget;
const serverEventLoop = `/proc/${target.serverPid}/task/${target.serverPid}/schedstat`;
const thisThread = '/proc/thread-self/schedstat';

/** A thread's time waiting on a run queue so far, in ms (schedstat's second field; see cpu-wait.ts), 0 where unknown. */
function runQueueWait(schedstat: string): number {
  try {
    return Number(readFileSync(schedstat, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

// One kept-alive connection: a GET costs no TLS handshake, only the server's work.
const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
const state = { running: true };
parentPort?.on('message', () => {
  state.running = false;
});

function get(): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      { host: target.host, port: target.port, path: target.path, ca: target.ca, cert: target.cert, key: target.key, servername: target.servername, agent, headers: { ...target.headers } },
      (response) => {
        response.resume();
        response.on('end', () => {
          resolve(response.statusCode ?? 0);
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

while (state.running) {
  const [serverBefore, ownBefore] = [runQueueWait(serverEventLoop), runQueueWait(thisThread)];
  const start = now();
  const status = await get().catch(() => 0);
  const end = now();
  const cpuWait = Math.max(runQueueWait(serverEventLoop) - serverBefore, runQueueWait(thisThread) - ownBefore);
  const message: GetLoopMessage = { get: { start, end, status, cpuWait } };
  parentPort?.postMessage(message);
  await sleep(target.pauseMs);
}
agent.destroy();
const stopped: GetLoopMessage = { stopped: true };
parentPort?.postMessage(stopped);
parentPort?.close();
