import net from 'node:net';

/**
 * Reserves `count` distinct free TCP ports on 127.0.0.1. All listeners stay
 * open until every port is chosen, so the same port is never returned twice;
 * another process may still grab one before it is used (acceptable in tests).
 */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, listenOnEphemeralPort));
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map(closeServer));
  return ports;
}

export async function freeLoopbackPort(): Promise<number> {
  const [port] = await freeLoopbackPorts(1);
  return port!;
}

function listenOnEphemeralPort(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolve(server);
    });
  });
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => {
      if (error) reject(error);
      else resolve();
    });
  });
}
