// The benchmark's HTTP client: HTTP/2 to kube-apiserver with a client
// certificate, as client-go talks to it (one TLS connection, many
// multiplexed streams), so the client's own cost per request stays small on a
// 2-core machine. Bodies are kept as bytes: parsing a 10,000-item list would
// cost the client more CPU than the servers spend answering it.
import http2 from 'node:http2';

export interface TlsIdentity {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export interface H2Response {
  readonly status: number;
  readonly body: Buffer;
}

export interface H2Request {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs?: number;
}

export interface WatchAnswer {
  readonly status: number;
  /** The Retry-After header of a refusal, in seconds. */
  readonly retryAfterSeconds?: number;
}

export interface WatchStream {
  /** Resolves once the headers arrived. */
  readonly established: Promise<WatchAnswer>;
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 180_000;

/**
 * A pool of HTTP/2 sessions to one server, re-opened when closed; requests
 * are spread round-robin, watches to the session with the fewest open ones
 * (a stream beyond the server's per-session limit waits in the client until
 * one ends, which a watch never does).
 */
export class H2Client {
  readonly #sessions: (http2.ClientHttp2Session | undefined)[];
  readonly #openWatches: number[];
  #next = 0;

  constructor(
    readonly origin: string,
    readonly identity: TlsIdentity,
    sessions = 1,
  ) {
    this.#sessions = new Array<http2.ClientHttp2Session | undefined>(sessions).fill(undefined);
    this.#openWatches = new Array<number>(sessions).fill(0);
  }

  #session(index = this.#next++ % this.#sessions.length): http2.ClientHttp2Session {
    const current = this.#sessions[index];
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    const session = http2.connect(this.origin, { ca: this.identity.ca, cert: this.identity.cert, key: this.identity.key });
    session.on('error', () => {
      this.#sessions[index] = undefined;
    });
    session.on('goaway', () => {
      this.#sessions[index] = undefined;
    });
    this.#sessions[index] = session;
    return session;
  }

  request(request: H2Request): Promise<H2Response> {
    return new Promise((resolve, reject) => {
      const headers: http2.OutgoingHttpHeaders = {
        ':method': request.method ?? 'GET',
        ':path': request.path,
        accept: 'application/json',
        ...request.headers,
      };
      const stream = this.#session().request(headers, { endStream: request.body === undefined });
      const chunks: Buffer[] = [];
      let status = 0;
      stream.setTimeout(request.timeoutMs ?? DEFAULT_TIMEOUT_MS, () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        reject(new Error(`${request.method ?? 'GET'} ${request.path}: no answer within ${request.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`));
      });
      stream.on('response', (responseHeaders) => {
        status = Number(responseHeaders[':status']);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        resolve({ status, body: Buffer.concat(chunks) });
      });
      stream.on('error', reject);
      if (request.body !== undefined) stream.end(request.body);
    });
  }

  /** Like request(), but throws unless 2xx and parses the body. */
  async json<T>(request: H2Request): Promise<T> {
    const response = await this.request(request);
    if (response.status < 200 || response.status > 299) {
      throw new Error(`${request.method ?? 'GET'} ${request.path}: ${response.status} ${response.body.toString('utf8').slice(0, 500)}`);
    }
    return JSON.parse(response.body.toString('utf8')) as T;
  }

  /** A long-running GET (a watch); `onLine` gets every complete newline-terminated line of the body. */
  watch(path: string, onLine: (line: string) => void): WatchStream {
    const index = this.#openWatches.indexOf(Math.min(...this.#openWatches));
    const stream = this.#session(index).request({ ':method': 'GET', ':path': path, accept: 'application/json' }, { endStream: true });
    this.#openWatches[index] = (this.#openWatches[index] ?? 0) + 1;
    stream.on('close', () => {
      this.#openWatches[index] = (this.#openWatches[index] ?? 1) - 1;
    });
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.trim() !== '') onLine(line);
        newline = pending.indexOf('\n');
      }
    });
    const established = new Promise<WatchAnswer>((resolve, reject) => {
      stream.on('response', (headers) => {
        const retryAfter = Number(headers['retry-after']);
        resolve({ status: Number(headers[':status']), ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}) });
      });
      stream.on('error', reject);
      stream.on('close', () => {
        reject(new Error(`watch ${path} closed before its headers`));
      });
    });
    // A stream reset after the measurement (close()) is expected.
    stream.on('error', () => undefined);
    return {
      established,
      close: () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
  }

  close(): void {
    for (const session of this.#sessions) session?.close();
    this.#sessions.fill(undefined);
  }
}

/** Runs `task` for every item with at most `concurrency` in flight; rejects with the first failure. */
export async function forEachConcurrently<T>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
