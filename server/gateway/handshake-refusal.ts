import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { asApiError } from '../core/errors';
import type { Services } from '../services/services';

/** Answers a refused handshake with the CONTRACT.md error body and closes the socket. */
export function refuseHandshake(socket: Duplex, requestId: string, error: unknown, services: Pick<Services, 'log'>, logMessage: string): void {
  const { apiError, unexpected } = asApiError(error);
  if (unexpected) services.log.error({ err: error, requestId }, logMessage);
  writeRefusal(socket, apiError.status, JSON.stringify(apiError.toBody(requestId)), requestId, apiError.headers);
}

export function writeRefusal(socket: Duplex, status: number, body: string, requestId: string, headers: Record<string, string>): void {
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n${extra.join('')}Connection: close\r\n\r\n${body}`,
  );
}
