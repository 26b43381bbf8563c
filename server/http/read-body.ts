import type { IncomingMessage } from 'node:http';
import { ApiError } from '../core/errors';

/** CONTRACT.md: a body over 1 MiB is 413 payload_too_large, on every entrance. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The raw request body, or null when it is over MAX_BODY_BYTES: refused as soon as the
 * declared Content-Length or the bytes received (chunked bodies declare none) pass it, so
 * the rest is never read nor held. The request is paused, not destroyed: its socket (and
 * the client's address) stay for the answer, which the caller sends with
 * `Connection: close` since the unread rest of the body is still on the connection. A
 * request that ends before its body did (the client left, or reset the connection) is
 * 400 invalid_request: the client's doing, never an error of the service, and usually
 * an answer nobody reads.
 */
export function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const declaredLength = Number(req.headers['content-length'] ?? NaN);
  if (declaredLength > MAX_BODY_BYTES) return Promise.resolve(null);

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      stop();
      req.pause();
      resolve(null);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error?: Error) => {
      stop();
      reject(new ApiError('invalid_request', { message: 'The request ended before its body did.', ...(error === undefined ? {} : { cause: error }) }));
    };
    const onClose = () => onError();
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
