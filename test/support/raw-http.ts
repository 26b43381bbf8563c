import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 answer read off a raw connection. */
export interface RawResponse {
  status: number;
  /** Header names in lower case; a repeated header's values joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * One TCP connection to an HTTP server, written and read by hand: requests go out as
 * given, one after another on the same socket, the way a proxy reusing its upstream
 * connections sends them. Nothing is pooled or retried, so a test sees exactly what the
 * server did with the connection.
 */
export class RawConnection {
  readonly #socket: Socket;
  #received = Buffer.alloc(0);
  #ended = false;
  #waiting: (() => void) | null = null;
  /** Resolves when the server has closed its side of the connection. */
  readonly ended: Promise<void>;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#received = Buffer.concat([this.#received, chunk]);
      this.#wake();
    });
    this.ended = new Promise((resolve) => {
      const end = () => {
        this.#ended = true;
        this.#wake();
        resolve();
      };
      socket.once('end', end);
      socket.once('close', end);
    });
    socket.on('error', () => undefined);
  }

  static open(baseUrl: string): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get closedByServer(): boolean {
    return this.#ended;
  }

  /** Writes bytes as they are (a request, or something that is not one). */
  write(bytes: string): void {
    this.#socket.write(bytes);
  }

  /**
   * Sends one request and reads its answer. `headers` are written as given after `Host`;
   * a body gets its Content-Length.
   */
  async request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
    if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    this.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
    return this.readResponse(method === 'HEAD');
  }

  /** Reads the next answer: its body by Content-Length, chunked encoding, or up to the close. */
  async readResponse(headOnly = false): Promise<RawResponse> {
    const headEnd = await this.#until(() => {
      const at = this.#received.indexOf('\r\n\r\n');
      return at < 0 ? null : at;
    });
    const [statusLine, ...headerLines] = this.#received.subarray(0, headEnd).toString('latin1').split('\r\n');
    this.#received = this.#received.subarray(headEnd + 4);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    if (headOnly || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') return { status, headers, body: await this.#chunkedBody() };
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      await this.#until(() => (this.#received.length >= length ? true : null));
      const body = this.#received.subarray(0, length);
      this.#received = this.#received.subarray(length);
      return { status, headers, body };
    }
    await this.ended;
    const body = this.#received;
    this.#received = Buffer.alloc(0);
    return { status, headers, body };
  }

  close(): void {
    this.#socket.destroy();
  }

  async #chunkedBody(): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = await this.#until(() => {
        const at = this.#received.indexOf('\r\n');
        return at < 0 ? null : at;
      });
      const size = Number.parseInt(this.#received.subarray(0, lineEnd).toString('latin1'), 16);
      await this.#until(() => (this.#received.length >= lineEnd + 2 + size + 2 ? true : null));
      parts.push(this.#received.subarray(lineEnd + 2, lineEnd + 2 + size));
      this.#received = this.#received.subarray(lineEnd + 2 + size + 2);
      if (size === 0) return Buffer.concat(parts);
    }
  }

  /** Waits until `ready` finds what it looks for in the bytes received; fails if the server closes first. */
  async #until<T>(ready: () => T | null): Promise<T> {
    for (;;) {
      const found = ready();
      if (found !== null) return found;
      if (this.#ended) throw new Error('the server closed the connection before the answer was complete');
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
    }
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting?.();
  }
}
