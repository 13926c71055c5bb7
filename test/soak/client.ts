// The soak's HTTP/1.1 clients, one per replica and identity: through
// kube-apiserver's aggregator (client certificate) to the replica behind the
// APIService, or straight to the other replica's port with the front-proxy
// certificate and X-Remote-* headers, as the aggregator would send them.
// The direct replica's port changes when it is killed and started again, so
// a client asks for its origin on every request.
import https from 'node:https';

export interface Endpoint {
  /** https://host:port, read on every request. */
  readonly origin: () => string;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly servername?: string;
  /** Sent with every request (the identity, on the direct path). */
  readonly headers?: Readonly<Record<string, string | string[]>>;
}

export interface Answer {
  readonly status: number;
  readonly body: string;
}

export interface WatchHandlers {
  onLine(line: string): void;
}

export interface WatchHandle {
  /** Resolves when the stream ends, with its status (0 when it failed before an answer) and the error that cut it, if any. */
  readonly ended: Promise<{ status: number; error?: string }>;
  close(): void;
}

export class SoakClient {
  readonly #agent: https.Agent;
  /** Where watches find their connections: undefined for a connection of their own each. */
  readonly #watchAgent: https.Agent | undefined;

  constructor(
    readonly name: string,
    readonly endpoint: Endpoint,
    sockets: number,
    pooledWatches = false,
  ) {
    this.#agent = new https.Agent({ keepAlive: true, maxSockets: sockets });
    // At most 25 idle connections kept, as client-go's transport (transport/cache.go, idleConnsPerHost); a watch that finds none opens one.
    this.#watchAgent = pooledWatches ? new https.Agent({ keepAlive: true, maxFreeSockets: 25 }) : undefined;
  }

  request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
    const url = new URL(path, this.endpoint.origin());
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = https.request(
        url,
        {
          ...this.#tls(),
          agent: this.#agent,
          method,
          timeout: 60_000,
          headers: { ...this.endpoint.headers, Accept: 'application/json', ...(payload === undefined ? {} : { 'Content-Type': contentType }) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => { resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }); });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error('no answer within 60 s')));
      request.on('error', reject);
      request.end(payload);
    });
  }

  /** A watch, holding its connection for its whole life: its own, or an idle pooled one (see the constructor). */
  watch(path: string, handlers: WatchHandlers): WatchHandle {
    const url = new URL(path, this.endpoint.origin());
    let request: ReturnType<typeof https.get> | undefined;
    const ended = new Promise<{ status: number; error?: string }>((resolve) => {
      request = https.get(url, { ...this.#tls(), agent: this.#watchAgent ?? false, headers: { ...this.endpoint.headers, Accept: 'application/json' } }, (response) => {
        const status = response.statusCode ?? 0;
        let pending = '';
        response.setEncoding('utf8');
        if (status !== 200) {
          // A refusal (a Status, or the aggregator's text while the replica is down): its reason is the error.
          response.on('data', (chunk: string) => (pending += chunk));
          response.on('end', () => {
            resolve({ status, error: `${status} ${reasonOf(pending)}` });
          });
          response.on('error', (error) => {
            resolve({ status, error: errorKind(error) });
          });
          return;
        }
        response.on('data', (chunk: string) => {
          pending += chunk;
          let newline = pending.indexOf('\n');
          while (newline >= 0) {
            const line = pending.slice(0, newline);
            pending = pending.slice(newline + 1);
            if (line !== '') handlers.onLine(line);
            newline = pending.indexOf('\n');
          }
        });
        response.on('end', () => { resolve({ status }); });
        response.on('error', (error) => { resolve({ status, error: errorKind(error) }); });
        response.on('aborted', () => { resolve({ status, error: 'aborted' }); });
      });
      request.on('error', (error) => { resolve({ status: 0, error: errorKind(error) }); });
    });
    return { ended, close: () => request?.destroy() };
  }

  close(): void {
    this.#agent.destroy();
    this.#watchAgent?.destroy();
  }

  #tls(): https.RequestOptions {
    const { ca, cert, key, servername } = this.endpoint;
    return { ca, cert, key, ...(servername === undefined ? {} : { servername }) };
  }
}

/** A Status's reason (or the first words of a body that is not one). */
export function reasonOf(body: string): string {
  try {
    const status = JSON.parse(body) as { reason?: string; message?: string };
    return status.reason ?? status.message?.slice(0, 60) ?? '';
  } catch {
    return body.slice(0, 60);
  }
}

/** A short name for a transport failure (ECONNREFUSED, ECONNRESET, socket hang up, …). */
export function errorKind(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message.slice(0, 60) : String(error).slice(0, 60);
}
