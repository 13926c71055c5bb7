/**
 * Hostile clients of one TLS connection each, written byte by byte: idle
 * connections, slowloris headers and bodies, watches that never read, bodies
 * that never end. Each records what the server sent and when the server
 * closed the connection, so a test can say how long the server let it live.
 * Also what the server process holds: its RSS and the connections open on
 * its port (from /proc, as the kernel sees them).
 */
import { readFile } from 'node:fs/promises';
import tls from 'node:tls';
import type { DirectConnection } from './raw-http.js';

export interface SlowClient {
  /** When the TLS handshake completed (ms, performance.now()). */
  readonly connectedAt: number;
  /** What the server sent, as text. */
  received(): string;
  /** Bytes the server sent. */
  receivedBytes(): number;
  /** When the connection closed (performance.now()), or undefined while open. */
  closedAt(): number | undefined;
  readonly closed: Promise<number>;
  write(text: string | Buffer): boolean;
  /** Resolves when the socket's write buffer drained (or it closed). */
  drained(): Promise<void>;
  /** Stop reading: the server's bytes stay in the kernel's buffers. */
  pause(): void;
  resume(): void;
  destroy(): void;
}

export interface ConnectOptions {
  /** Present the front-proxy client certificate (needed for a request to reach a handler). */
  readonly withCertificate?: boolean;
}

export function connect(target: DirectConnection, options: ConnectOptions = {}): Promise<SlowClient> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: target.host,
      port: target.port,
      ca: target.ca,
      servername: target.servername,
      ...(options.withCertificate === true ? { cert: target.cert, key: target.key } : {}),
    });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let closedAt: number | undefined;
    const closed = new Promise<number>((resolveClosed) => {
      socket.once('close', () => {
        closedAt = performance.now();
        resolveClosed(closedAt);
      });
    });
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Keep what a test reads (status lines, Status bodies), not megabytes of events.
      if (bytes <= 64 * 1024) chunks.push(chunk);
    });
    // Before the handshake an error fails the connect; after it, a reset is one way for the server to close.
    socket.on('error', reject);
    socket.once('secureConnect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve({
        connectedAt: performance.now(),
        received: () => Buffer.concat(chunks).toString('utf8'),
        receivedBytes: () => bytes,
        closedAt: () => closedAt,
        closed,
        write: (text) => (socket.writable ? socket.write(text) : false),
        drained: () =>
          new Promise((resolveDrained) => {
            if (!socket.writableNeedDrain || socket.destroyed) {
              resolveDrained();
              return;
            }
            const done = (): void => {
              socket.off('drain', done);
              socket.off('close', done);
              resolveDrained();
            };
            socket.on('drain', done);
            socket.on('close', done);
          }),
        pause: () => socket.pause(),
        resume: () => socket.resume(),
        destroy: () => socket.destroy(),
      });
    });
  });
}

/** Request headers as the aggregator would send them for the identity of `target`, ending with the blank line when `complete`. */
export function requestHead(target: DirectConnection, method: string, path: string, headers: Record<string, string>, complete = true): string {
  const identity = Object.entries(target.headers).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${v}`));
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: localhost', ...identity, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n${complete ? '\r\n' : ''}`;
}

/** Opens `count` connections, `concurrency` handshakes at a time. */
export async function connectMany(target: DirectConnection, count: number, concurrency: number, options: ConnectOptions = {}): Promise<SlowClient[]> {
  const clients: SlowClient[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      clients.push(await connect(target, options));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return clients;
}

/** Resident set size in MiB (VmRSS of /proc/<pid>/status). */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null) throw new Error(`/proc/${pid}/status has no VmRSS`);
  return Number(match[1]) / 1024;
}

/**
 * Connections the server process still holds on its port: sockets of the
 * listening port in /proc/<pid>/net/tcp that belong to a process (inode ≠ 0;
 * a socket the server closed with bytes still unsent lingers there as the
 * kernel's, with inode 0), the listener itself excluded.
 */
export async function heldConnections(pid: number, port: number): Promise<number> {
  const table = await readFile(`/proc/${pid}/net/tcp`, 'utf8');
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return table
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) === true && fields[3] !== '0A' && fields[9] !== '0').length;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
