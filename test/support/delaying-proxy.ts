/**
 * A TCP proxy on loopback that forwards bytes unchanged (TLS passes through)
 * and holds everything flowing back from the target for a fixed delay,
 * order preserved: a replica behind it sees kube-apiserver's answers and
 * watch events late, like a replica whose watch lags.
 */
import net from 'node:net';

export interface DelayingProxy {
  readonly port: number;
  close(): Promise<void>;
}

export async function startDelayingProxy(target: { host: string; port: number }, delayMs: number): Promise<DelayingProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
      }, delayMs);
    });
    upstream.on('end', () => setTimeout(() => client.end(), delayMs));
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', () => setTimeout(closeBoth, delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => { resolve(); });
      }),
  };
}
