/**
 * The HTTPS listener and its graceful shutdown: on SIGTERM readiness fails
 * at once, the listener stops accepting, in-flight requests get a bounded
 * time to finish, then every remaining connection (watches, idle
 * keep-alives, half-open handshakes) is destroyed so clients reconnect to
 * another replica and the process can exit.
 */
import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Express } from 'express';
import type { TlsContextSwitch } from './tls-context.js';

// Above Go's default idle-connection timeout (90 s) so kube-apiserver never reuses a connection we just closed.
const keepAliveTimeoutMs = 120_000;

export class HttpsServer {
  private readonly server: https.Server;
  // Raw sockets, tracked from accept: Node's closeAllConnections() misses sockets still in the TLS handshake.
  private readonly sockets = new Set<Socket>();
  private inFlight = 0;
  private readonly drained = new EventTarget();

  constructor(app: Express, tls: TlsContextSwitch) {
    this.server = https.createServer(tls.options(), app);
    this.server.keepAliveTimeout = keepAliveTimeoutMs;
    this.server.headersTimeout = 60_000;
    // Watches are long-running: no whole-request timeout at the socket level.
    this.server.requestTimeout = 0;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('request', (_req, res: import('node:http').ServerResponse) => {
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
