import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';

type HeaderValue = number | string | readonly string[];

/**
 * The server's responses (`createServer({ ServerResponse: ConnectionHonouringResponse })`):
 * the answer to a request that asked to close its connection (`Connection: close`, or
 * HTTP/1.0 without keep-alive) says `Connection: close`, and Node closes the socket after
 * it, whatever header a handler sets. A handler's own `Connection: keep-alive` (the MCP
 * SDK's event streams set one) would otherwise make Node keep the socket while its parser,
 * having read `close`, refuses whatever comes next on it with a bare 400: through a proxy
 * that reuses connections, a random 400 on someone else's request.
 *
 * Node itself decides keep-alive for every other request; only the client's `close` is
 * enforced here. Until the head is written, `shouldKeepAlive` is the parser's verdict on
 * the request (a handler's header changes it only when the head is stored).
 */
export class ConnectionHonouringResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override setHeader(name: string, value: HeaderValue): this {
    return super.setHeader(name, this.#closing(name) ? 'close' : value);
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    if (this.#closing(name)) return super.setHeader(name, 'close');
    return super.appendHeader(name, value);
  }

  override writeHead(statusCode: number, statusMessage?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    // Once a header is set, Node merges the headers given here through setHeader (and
    // appendHeader for a raw list) instead of writing them as given: a `Connection` among
    // them then goes through the overrides above.
    if (!this.shouldKeepAlive && !this.headersSent) this.setHeader('Connection', 'close');
    if (typeof statusMessage === 'string') return super.writeHead(statusCode, statusMessage, headers);
    return super.writeHead(statusCode, statusMessage);
  }

  #closing(name: string): boolean {
    return !this.shouldKeepAlive && name.toLowerCase() === 'connection';
  }
}
