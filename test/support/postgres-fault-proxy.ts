import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real PostgreSQL that can lose connections the way a database
 * going away does, at a moment a test chooses: once `cutAfterStartup()` is called, every
 * connection opened is cut on its first request after the server said it is ready
 * (postgres.js's first statement on a new connection: its read of the array types), and a
 * second after the first cut the proxy stops listening, so the client's next attempts are
 * refused. `restore()` listens again and forwards as before.
 */
export interface PostgresFaultProxy {
  /** The upstream's URL with the proxy's host and port. */
  url: string;
  cutAfterStartup(): void;
  /** How many connections were cut so far. */
  readonly cuts: number;
  restore(): Promise<void>;
  close(): Promise<void>;
}

// ReadyForQuery ('Z'): the server's message that ends a connection's startup.
const READY_FOR_QUERY = 0x5a;
const REFUSE_AFTER_FIRST_CUT_MS = 1_000;

export async function startPostgresFaultProxy(upstreamUrl: string, port: number): Promise<PostgresFaultProxy> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<Socket>();
  let cutting = false;
  let cuts = 0;
  let listener: Server | null = null;

  const accept = (client: Socket) => {
    const cutOnFirstRequest = cutting;
    const database = connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client).add(database);
    const drop = () => {
      client.destroy();
      database.destroy();
      sockets.delete(client);
      sockets.delete(database);
    };
    client.on('error', drop).on('close', drop);
    database.on('error', drop).on('close', drop);
    let ready = false;
    let pending = Buffer.alloc(0);
    database.on('data', (chunk: Buffer) => {
      client.write(chunk);
      if (ready) return;
      // The server's messages: a type byte and a length that counts itself.
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(1);
        if (pending.length < 1 + length) break;
        if (pending[0] === READY_FOR_QUERY) ready = true;
        pending = pending.subarray(1 + length);
      }
    });
    client.on('data', (chunk: Buffer) => {
      if (ready && cutOnFirstRequest) {
        cuts += 1;
        drop();
        // The database is gone a moment later: the client's next attempts are refused.
        // (The moment lets every connection the client opens again meet the cut: its
        // LISTEN connection is often the first, and reads no types.)
        if (cuts === 1) setTimeout(() => void stopListening(), REFUSE_AFTER_FIRST_CUT_MS);
        return;
      }
      database.write(chunk);
    });
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const listening = createServer(accept);
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => {
        listener = listening;
        resolve();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      const listening = listener;
      listener = null;
      if (listening === null) return resolve();
      listening.close(() => resolve());
    });

  await listen();
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cutAfterStartup() {
      cutting = true;
    },
    get cuts() {
      return cuts;
    },
    async restore() {
      cutting = false;
      if (listener === null) await listen();
    },
    async close() {
      await stopListening();
      for (const socket of sockets) socket.destroy();
    },
  };
}
