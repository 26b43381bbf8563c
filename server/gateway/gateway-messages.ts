import { z } from 'zod';
import type { LiveFrame } from '../browser';

// The session WebSocket protocol (subprotocol `svc.operator.v1`, domain/sessions/session-token.ts), JSON text messages.
// Server → client: `ready` once, then `frame`s; `error` when an input is refused.
// Client → server: `input`. docs/api.md ("Sessions") is the reference.

const coordinate = z.number().finite().min(0).max(100_000);
const delta = z.number().finite().min(-100_000).max(100_000);

export const ClientMessageSchema = z.strictObject({
  type: z.literal('input'),
  input: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('click'), x: coordinate, y: coordinate, button: z.enum(['left', 'right', 'middle']).default('left') }),
    z.strictObject({ kind: z.literal('move'), x: coordinate, y: coordinate }),
    z.strictObject({ kind: z.literal('scroll'), x: coordinate, y: coordinate, dx: delta, dy: delta }),
    z.strictObject({ kind: z.literal('key'), key: z.string().min(1).max(50) }),
    z.strictObject({ kind: z.literal('text'), text: z.string().min(1).max(10_000) }),
  ]),
});

/** The `frame` message of a screencast frame, encoded once for every socket that shows it. */
export function encodeFrameMessage(frame: LiveFrame): Buffer {
  return Buffer.from(JSON.stringify({ type: 'frame', format: 'jpeg', data: frame.data, width: frame.width, height: frame.height }));
}

const FRAME_MESSAGE_START = Buffer.from('{"type":"frame"');

/** Whether a message is a `frame` as encodeFrameMessage writes it, without parsing it. */
export function isFrameMessage(message: Buffer): boolean {
  return message.subarray(0, FRAME_MESSAGE_START.length).equals(FRAME_MESSAGE_START);
}

// A socket with more than this waiting to be sent gets no new frames until it drains: a
// slow viewer sees fewer frames instead of growing the server's memory (the gateway's own
// sockets and the relay's alike).
export const MAX_BUFFERED_FRAME_BYTES = 2 * 1024 * 1024;

/** Why an input was refused; the socket stays open. */
export type InputRefusal = 'invalid_message' | 'input_not_allowed' | 'invalid_input';

/** Close codes (4000-4999 are the application's): the reason is the CONTRACT.md code. */
export const CLOSE = {
  sessionExpired: { code: 4410, reason: 'session_expired' },
  deviceNotReady: { code: 4409, reason: 'device_not_ready' },
  // 1008 is the protocol's policy violation: the client sent inputs faster than the page takes them.
  inputQueueFull: { code: 1008, reason: 'input_queue_full' },
} as const;
