import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that counts round trips: the times a client sent a
 * statement with nothing of its own still unanswered, so that it had waited for every
 * answer before. Statements a client pipelines (sent before the answers to the ones before
 * them) add none. It reads the wire protocol: each Sync or simple Query the client sends
 * is answered by one ReadyForQuery. Answers reach the client ANSWER_DELAY_MS late, as
 * over a network: a statement sent without waiting goes out within that time whatever the
 * host's load, so one the client only sent after an answer is the one counted.
 */
export interface RoundTripCounter {
  /** The database URL through the proxy. */
  url: string;
  /** Runs `work` and answers how many round trips it took. */
  count(work: () => Promise<unknown>): Promise<number>;
  close(): Promise<void>;
}

const ANSWER_DELAY_MS = 30;

/**
 * Calls `onMessage` with the type of each whole message a side sends; the client's first
 * (startup) message has none. Plain connections only, as the tests' are: no TLS request.
 */
function messageReader(untypedFirst: boolean, onMessage: (type: string) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let untyped = untypedFirst;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const header = untyped ? 4 : 5;
      if (pending.length < header) return;
      const length = pending.readUInt32BE(header - 4) + (untyped ? 0 : 1);
      if (pending.length < length) return;
      if (!untyped) onMessage(String.fromCharCode(pending[0]!));
      untyped = false;
      pending = pending.subarray(length);
    }
  };
}

export async function startRoundTripCounter(databaseUrl: string): Promise<RoundTripCounter> {
  const target = new URL(databaseUrl);
  let roundTrips = 0;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    let unanswered = 0;
    const fromClient = messageReader(true, (type) => {
      if (type !== 'S' && type !== 'Q') return;
      if (unanswered === 0) roundTrips += 1;
      unanswered += 1;
    });
    const fromServer = messageReader(false, (type) => {
      if (type === 'Z') unanswered = Math.max(0, unanswered - 1);
    });
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => {
      fromClient(chunk);
      server.write(chunk);
    });
    // Timers of one delay fire in the order they were set: the answers keep theirs.
    server.on('data', (chunk) => {
      setTimeout(() => {
        fromServer(chunk);
        if (!client.destroyed) client.write(chunk);
      }, ANSWER_DELAY_MS);
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
      const before = roundTrips;
      await work();
      return roundTrips - before;
    },
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      proxy.close(() => resolve());
    }),
  };
}
