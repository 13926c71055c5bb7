import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { H2Client } from '../../../test/bench/h2.js';

/** A cleartext HTTP/2 server allowing two streams per session that answers and keeps every stream open. */
async function holdingServer(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http2.createServer({ settings: { maxConcurrentStreams: 2 } });
  const streams = new Set<http2.ServerHttp2Stream>();
  server.on('stream', (stream) => {
    streams.add(stream);
    stream.on('close', () => streams.delete(stream));
    stream.respond({ ':status': 200 });
    stream.write('{}\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const stream of streams) stream.close();
        server.close(() => {
          resolve();
        });
      }),
  };
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([
    promise,
    new Promise<'timeout'>((resolve) => {
      setTimeout(() => {
        resolve('timeout');
      }, ms);
    }),
  ]);

describe('H2Client watches', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('opens a watch on the session with a free stream, not the next in turn, once one closed', async () => {
    const server = await holdingServer();
    const client = new H2Client(server.origin, { ca: '', cert: '', key: '' }, 2);
    cleanups.push(
      () => server.close(),
      () => {
        client.close();
      },
    );
    // Four watches fill both sessions (two streams each).
    const watches = Array.from({ length: 4 }, () => client.watch('/w', () => undefined));
    expect((await Promise.all(watches.map((w) => w.established))).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    // One ends on the second session; round-robin would put the next on the first, which is full.
    watches[1]?.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = client.watch('/w', () => undefined);
    expect(await within(next.established.then((a) => a.status), 2000)).toBe(200);
  });
});
