import { z } from 'zod';
import { mintSession, MintSessionBodySchema } from '../../domain/sessions/mint-session';
import { MintedSessionSchema } from '../../domain/sessions/session-resource';
import { writeGated } from '../../trpc/procedures';

export const createSessionProcedure = writeGated('operator:sessions:write')
  .meta({
    openapi: {
      method: 'POST',
      path: '/devices/{id}/sessions',
      tags: ['sessions'],
      summary: 'Mint a live-view session (control mode also needs operator:sessions:control)',
      description:
        'Connect to `ws_url` with `Sec-WebSocket-Protocol: svc.operator.v1, svc.token.<session_token>` (never in the URL). The server sends `{"type": "ready", ...}`, then `{"type": "frame", "format": "jpeg", "data", "width", "height"}` frames; a control session holding a takeover sends `{"type": "input", "input": {"kind": "click" | "move" | "scroll" | "key" | "text", ...}}`. A session has at most 4 sockets at once (configurable; the next handshake is 429 `too_many_sockets`), and a socket with too many inputs waiting is closed with 1008 `input_queue_full`. Close code 1012 `service_restart` (the instance restarts or hands the device over) means reconnect with the same `ws_url` and token after a short backoff (250 ms doubling to 5 s); 4410 `session_expired` and 4409 `device_not_ready` end the view. See docs/api.md, "Sessions and the live-view gateway".',
    },
    successStatus: 201,
  })
  .input(MintSessionBodySchema.extend({ id: z.string().max(200) }))
  .output(MintedSessionSchema)
  .mutation(({ ctx, input: { id, ...body } }) =>
    mintSession(ctx.services.db, ctx.services.config.http.publicUrl, { principal: ctx.principal, requestId: ctx.requestId, devicePublicId: id, body }),
  );
