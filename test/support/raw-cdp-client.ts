import WebSocket from 'ws';

export interface RawCdpClient {
  /** Sends a command (on a session when `sessionId` is given) and resolves with the whole answer, error included. */
  send(method: string, params?: object, sessionId?: string): Promise<any>;
  /** Every event received, in order. */
  events: any[];
  /** Resolves with the close code and reason once the socket closed. */
  closed: Promise<{ code: number; reason: string }>;
  socket: WebSocket;
  /** Closes the socket and waits for it to be closed. */
  close(): Promise<void>;
}

/**
 * A DevTools client that sends exactly what a test says, for what Puppeteer, Playwright and
 * Stagehand never send or hide. A refused handshake rejects with the status in the message
 * (`Unexpected server response: 409`).
 */
export async function rawCdpClient(url: string): Promise<RawCdpClient> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  const waiting = new Map<number, (message: any) => void>();
  const events: any[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined) waiting.get(message.id)?.(message);
    else events.push(message);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return {
    socket,
    events,
    closed,
    send: (method, params = {}, sessionId) =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
      }),
    close: async () => {
      socket.close();
      await closed;
    },
  };
}
