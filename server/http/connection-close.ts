import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';

type HeaderValue = number | string | readonly string[];

/**
 * The server's responses (`createServer({ ServerResponse: ConnectionHonouringResponse })`):
 * whether a connection is kept alive is Node's to say, or a handler's `Connection: close`
 * (a body refused unread, still on the connection). Node answers a request that asked to
 * close (`Connection: close`, or HTTP/1.0 without keep-alive) with `Connection: close` and
 * closes the socket after it; any other with `Connection: keep-alive` and
 * `Keep-Alive: timeout=5`, the idle time after which it closes the socket.
 *
 * A handler's `Connection: keep-alive` (the MCP SDK's event streams set one) is dropped: it
 * would make Node keep a socket whose parser, having read `close`, refuses whatever comes
 * next on it with a bare 400 (through a proxy that reuses connections, a random 400 on
 * someone else's request), and would take the idle time out of the answer, so that a
 * client could not know when to stop reusing the connection (docs/api.md, "Connections").
 */
export class ConnectionHonouringResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override setHeader(name: string, value: HeaderValue): this {
    return keptByNode(name, value) ? this : super.setHeader(name, value);
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    return keptByNode(name, value) ? this : super.appendHeader(name, value);
  }

  override writeHead(statusCode: number, statusMessage?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    if (typeof statusMessage === 'string') return super.writeHead(statusCode, statusMessage, withoutKeepAlive(headers));
    return super.writeHead(statusCode, withoutKeepAlive(statusMessage));
  }
}

/** Whether a handler's header is a `Connection` other than `close`, which Node decides instead. */
function keptByNode(name: string, value: HeaderValue | undefined): boolean {
  return name.toLowerCase() === 'connection' && String(value).trim().toLowerCase() !== 'close';
}

/** Headers given to writeHead, an object or a flat list of names and values, without a `Connection` Node decides. */
function withoutKeepAlive(headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined {
  if (headers === undefined) return undefined;
  if (!Array.isArray(headers)) return Object.fromEntries(Object.entries(headers).filter(([name, value]) => !keptByNode(name, value)));
  const kept: OutgoingHttpHeader[] = [];
  for (let index = 0; index < headers.length; index += 2) {
    if (!keptByNode(String(headers[index]), headers[index + 1])) kept.push(headers[index]!, headers[index + 1]!);
  }
  return kept;
}
