// Messages separated by a NUL byte, as on Chromium's --remote-debugging-pipe and on a
// keeper's socket. Self-contained: the keeper process imports it (keeper-protocol.ts).

/** Splits a byte stream into NUL-terminated UTF-8 messages, across chunk boundaries. */
export class NulFrameReader {
  private pending: Buffer[] = [];

  /** The messages this chunk completes, in order. */
  push(chunk: Buffer): string[] {
    const messages: string[] = [];
    let start = 0;
    let end = chunk.indexOf(0, start);
    while (end !== -1) {
      const piece = chunk.subarray(start, end);
      if (this.pending.length > 0) {
        this.pending.push(piece);
        messages.push(Buffer.concat(this.pending).toString('utf8'));
        this.pending = [];
      } else {
        messages.push(piece.toString('utf8'));
      }
      start = end + 1;
      end = chunk.indexOf(0, start);
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
    return messages;
  }
}

/** One message as written on the wire. */
export function nulFrame(message: string): string {
  return `${message}\0`;
}
