/**
 * The HTTPS listener and its graceful shutdown: on SIGTERM readiness fails
 * at once, the listener stops accepting, in-flight requests get a bounded
 * time to finish, then every remaining connection (watches, idle
 * keep-alives, half-open handshakes) is destroyed so clients reconnect to
 * another replica and the process can exit. Request headers (request line
 * included) may take 1 MiB, kube-apiserver's MaxHeaderBytes
 * (k8s.io/apiserver SecureServingInfo.Serve); beyond that the answer is Go
 * net/http's: 431 with a plain-text body, then the connection closes.
 *
 * Slow and idle clients are bounded in time as kube-apiserver's server bounds
 * them (SecureServingInfo.Serve: ReadHeaderTimeout 32 s, which Go also
 * applies to the TLS handshake and to a new connection's first request), so
 * what a connection holds is released: see docs/reliability.md, "Slow and
 * hostile clients".
 */
import { once } from 'node:events';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Express } from 'express';
import type { TlsContextSwitch } from './tls-context.js';

// Above Go's default idle-connection timeout (90 s) so kube-apiserver never reuses a connection we just closed.
const keepAliveTimeoutMs = 120_000;
/** kube-apiserver's ReadHeaderTimeout: for the TLS handshake, for a new connection to send its first request, for each request's headers. */
export const readHeaderTimeoutMs = 32_000;
/**
 * For a request to arrive whole, body included: a backstop 5 s past the
 * default request deadline (`--request-timeout`, filters/request-deadline.ts),
 * which answers a body still arriving at 60 s with kube's 504 first. Node
 * counts it only until the request is received, so watches and other long
 * answers are not cut.
 */
export const requestReceiveTimeoutMs = 65_000;
/** An answer whose client has not taken its last bytes this long after it ended (it stopped reading) is dropped with its connection. */
export const unreadAnswerTimeoutMs = 60_000;
// How often Node checks the two deadlines above (its default, 30 s, would let a slow client overstay by that much).
const connectionsCheckingIntervalMs = 2_000;
/** kube-apiserver's MaxHeaderBytes (1 << 20); Node's default is 16 KiB. */
export const maxHeaderBytes = 1 << 20;
// Go reads MaxHeaderBytes plus 4 KiB of bufio slack before refusing (net/http initialReadLimitSize).
const headerReadLimit = maxHeaderBytes + 4096;
// What Go's net/http writes when a request's headers exceed MaxHeaderBytes.
const headersTooLarge = 'HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large';

export class HttpsServer {
  private readonly server: https.Server;
  // Raw sockets, tracked from accept: Node's closeAllConnections() misses sockets still in the TLS handshake.
  private readonly sockets = new Set<Socket>();
  private inFlight = 0;
  private readonly drained = new EventTarget();

  constructor(app: Express, tls: TlsContextSwitch) {
    this.server = https.createServer(
      {
        ...tls.options(),
        maxHeaderSize: headerReadLimit,
        handshakeTimeout: readHeaderTimeoutMs,
        headersTimeout: readHeaderTimeoutMs,
        requestTimeout: requestReceiveTimeoutMs,
        connectionsCheckingInterval: connectionsCheckingIntervalMs,
      },
      app,
    );
    this.server.on('clientError', answerClientError);
    this.server.keepAliveTimeout = keepAliveTimeoutMs;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    // Node's HTTP server times out headers only once their first byte came: a connection that sends nothing is dropped after kube's ReadHeaderTimeout.
    this.server.on('secureConnection', (socket: TLSSocket) => socket.setTimeout(readHeaderTimeoutMs));
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      // From here Node's own deadlines apply: request receipt, then keep-alive once answered.
      req.socket.setTimeout(0);
      dropWhenUnread(res);
      closeWhenBodyUnread(req, res);
      this.inFlight++;
      res.once('close', () => {
        this.inFlight--;
        if (this.inFlight === 0) this.drained.dispatchEvent(new Event('drained'));
      });
    });
    tls.attach(this.server);
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  async shutdown(timeoutMs: number): Promise<void> {
    const closed = once(this.server, 'close');
    this.server.close();
    this.server.closeIdleConnections();
    if (this.inFlight > 0) {
      const deadline = AbortSignal.timeout(timeoutMs);
      await Promise.race([once(this.drained, 'drained'), once(deadline, 'abort')]);
    }
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

/**
 * A client that stopped reading keeps an ended answer's unsent bytes in this
 * process (and a watch the hub closed as a slow consumer) for as long as it
 * keeps the connection: drop the connection once the answer has waited
 * `unreadAnswerTimeoutMs` for it.
 */
function dropWhenUnread(res: ServerResponse): void {
  res.once('prefinish', () => {
    if (res.writableFinished) return;
    const timer = setTimeout(() => res.destroy(), unreadAnswerTimeoutMs);
    timer.unref();
    res.once('finish', () => { clearTimeout(timer); });
    res.once('close', () => { clearTimeout(timer); });
  });
}

/**
 * An answer sent before its request's body was read whole, as net/http
 * treats it (chunkWriter.writeHeader): a rest of at most 256 KiB
 * (maxPostHandlerReadBytes) is read and discarded and the connection kept
 * (Node's own behaviour); anything larger, or of unknown length, ends the
 * connection (closeAfterReply: 413 past the body limit, a refusal before a
 * large body is read), or Node would read and discard whatever the client
 * keeps sending. The answer says so with `Connection: close`, as net/http
 * writes it: a client that is not told puts the connection back in its pool
 * and sends its next request into the close, which kube-apiserver's proxy
 * answers 503 `error trying to reach service: EOF` (a POST is not retried).
 * The close lingers (`lingerOnClose`).
 */
function closeWhenBodyUnread(req: IncomingMessage, res: ServerResponse): void {
  // Node detaches the socket from the request once answered.
  const socket = req.socket;
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  Object.assign(res, {
    writeHead: (...args: unknown[]): ServerResponse => {
      if (!req.complete && !res.headersSent) {
        if (!discardable(req)) res.setHeader('Connection', 'close');
        if (res.getHeader('Connection') === 'close') lingerOnClose(socket);
      }
      return writeHead(...args);
    },
  });
}

/**
 * net/http's closeWriteAndWait for an answer that closes its connection
 * while the client is still sending the body. Node ends such an answer with
 * `destroySoon()`, which closes the socket as soon as the answer is
 * written: the client's next write then fails (EPIPE, or a reset that can
 * also discard the answer), and kube-apiserver's proxy, still writing the
 * body, reports its failed write, `503 error trying to reach service:
 * write: broken pipe`, instead of the answer. Here the answer is followed by
 * a half-close; what the client still sends is read (and discarded by the
 * request) for `rstAvoidanceDelayMs`, then the socket closes.
 */
function lingerOnClose(socket: Duplex): void {
  Object.assign(socket, {
    destroySoon: (): void => {
      socket.end();
      setTimeout(() => socket.destroy(), rstAvoidanceDelayMs).unref();
    },
  });
}

/** net/http's maxPostHandlerReadBytes. */
const maxDiscardedBodyBytes = 256 << 10;

/** A body of known length small enough to read and discard after the answer. */
function discardable(req: IncomingMessage): boolean {
  const length = Number(req.headers['content-length']);
  return req.headers['transfer-encoding'] === undefined && Number.isInteger(length) && length <= maxDiscardedBodyBytes;
}

/**
 * net/http's closeWriteAndWait: a client may still be sending the rest of an
 * oversized request; closing with its bytes unread would reset the
 * connection and lose the answer. Half-close after the answer, discard what
 * still arrives for a moment, then close.
 */
function answerThenLinger(socket: Duplex, answer: string): void {
  // The HTTP parser that failed must not see more bytes.
  socket.removeAllListeners('data');
  socket.on('data', () => undefined);
  socket.resume();
  socket.end(answer);
  setTimeout(() => socket.destroy(), rstAvoidanceDelayMs).unref();
}

/** Go's rstAvoidanceDelay. */
const rstAvoidanceDelayMs = 500;

/** Node's own answers to unparsable requests, except oversized headers, which get Go's text body rather than an empty one. */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') socket.destroy();
  else if (error.code === 'HPE_HEADER_OVERFLOW') answerThenLinger(socket, headersTooLarge);
  else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  else socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
}
