import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError } from '../core/errors';
import { newPublicId } from '../domain/ids';
import type { Logger } from '../core/log';

// Node's own answer to what it cannot parse is a bare `400 Bad Request` that nobody logs;
// proxies pass it on to a client that then has no request id to report.

/** What Node tells of an error before a request existed (`clientError`). */
interface ClientError extends Error {
  code?: string;
  /** llhttp's fixed description, e.g. `Invalid method encountered`; never request bytes. */
  reason?: string;
  bytesParsed?: number;
}

const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request headers are too large.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in time.',
};
const DEFAULT_MESSAGE = 'The request is not valid HTTP/1.1.';

/**
 * The server's `clientError` listener: a request Node could not parse (or that took too
 * long to arrive) is logged with a request id and the parser's error code, never the
 * bytes received (`rawPacket` would hold the Authorization header), and answered 400
 * `invalid_request` with the CONTRACT.md body and `Connection: close`: the connection
 * cannot be read further. No answer is written over a response already under way.
 */
export function answerClientError(log: Logger) {
  return function onClientError(error: ClientError, socket: Socket): void {
    // A client that hung up has nobody to answer.
    if (error.code === 'ECONNRESET' || !socket.writable || responseUnderWay(socket)) {
      socket.destroy();
      return;
    }
    const requestId = newPublicId('request');
    log.warn({ requestId, code: error.code, reason: error.reason, bytesParsed: error.bytesParsed }, 'unparseable request refused');
    answerOnSocket(socket, 400, JSON.stringify(new ApiError('invalid_request', { message: MESSAGES[error.code ?? ''] ?? DEFAULT_MESSAGE }).toBody(requestId)), requestId);
  };
}

/**
 * Answers where there is no response object to write with (a request Node could not
 * parse, a refused WebSocket handshake): the status, the JSON body with its request id and
 * `Connection: close`, then the socket ends.
 */
export function answerOnSocket(socket: Duplex, status: number, body: string, requestId: string, headers: Record<string, string> = {}): void {
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n${extra.join('')}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * Whether a response on this socket has written its head: more bytes would corrupt it.
 * Node keeps the response in flight on the socket as `_httpMessage` (its own default
 * handler checks the same), which its types do not show.
 */
function responseUnderWay(socket: Socket): boolean {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  return inFlight !== undefined && inFlight !== null && inFlight.headersSent;
}
