/**
 * The HTTPS listener and its graceful shutdown: on SIGTERM readiness fails
 * at once, the listener stops accepting, in-flight requests get a bounded
 * time to finish, then remaining connections (watches) are closed so
 * clients reconnect to another replica.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { TlsContextSwitch } from './tls-context.js';

// Above Go's default idle-connection timeout (90 s) so kube-apiserver never reuses a connection we just closed.
const keepAliveTimeoutMs = 120_000;

export class HttpsServer {
  private readonly server: https.Server;

  constructor(app: Express, tls: TlsContextSwitch) {
    this.server = https.createServer(tls.options(), app);
    this.server.keepAliveTimeout = keepAliveTimeoutMs;
    this.server.headersTimeout = 60_000;
    // Watches are long-running: no whole-request timeout at the socket level.
    this.server.requestTimeout = 0;
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
    const closed = new Promise<void>((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
    this.server.closeIdleConnections();
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    await Promise.race([closed, deadline]);
    this.server.closeAllConnections();
    await closed;
  }
}
