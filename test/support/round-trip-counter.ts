import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that counts round trips: each time the client
 * writes after the server has answered (or first) is one. Statements a client pipelines
 * go out in one flight and count once, which is what the counter is for.
 */
export interface RoundTripCounter {
  /** The database URL through the proxy. */
  url: string;
  /** Runs `work` and answers how many round trips it took. */
  count(work: () => Promise<unknown>): Promise<number>;
  close(): Promise<void>;
}

export async function startRoundTripCounter(databaseUrl: string): Promise<RoundTripCounter> {
  const target = new URL(databaseUrl);
  let flights = 0;
  let lastFrom: 'client' | 'server' = 'server';
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => {
      if (lastFrom === 'server') flights += 1;
      lastFrom = 'client';
      server.write(chunk);
    });
    server.on('data', (chunk) => {
      lastFrom = 'server';
      client.write(chunk);
    });
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((proxy.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    async count(work) {
      const before = flights;
      await work();
      return flights - before;
    },
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      proxy.close(() => resolve());
    }),
  };
}
