import { z } from 'zod';
import { mintSession, MintSessionBodySchema } from '../domain/sessions/mint-session';
import { release, ReleaseResultSchema, revokeSession, takeOver, TakeoverBodySchema, TakeoverResultSchema } from '../domain/sessions/session-operations';
import { getSession, loadSessionForCaller, MintedSessionSchema, SessionSchema } from '../domain/sessions/session-resource';
import { scoped, writeGated } from '../trpc/procedures';
import { recordingEntryPoint } from './recording-route';

// /v1 live-view sessions: mint on a device, get, revoke, take over, release; their recording.

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

export const getSessionProcedure = scoped('operator:sessions:write')
  .meta({ openapi: { method: 'GET', path: '/sessions/{id}', tags: ['sessions'], summary: 'Get a session (never its token)' } })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(SessionSchema)
  .query(({ ctx, input }) => getSession(ctx.services.db, ctx.services.config.http.publicUrl, ctx.principal, input.id));

export const revokeSessionProcedure = writeGated('operator:sessions:write')
  .meta({ openapi: { method: 'DELETE', path: '/sessions/{id}', tags: ['sessions'], summary: 'Revoke a session; its open sockets close at once' }, successStatus: 204 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => revokeSession(ctx.services, ctx.principal, ctx.requestId, input.id));

export const takeOverProcedure = writeGated('operator:sessions:control')
  .meta({ openapi: { method: 'POST', path: '/sessions/{id}/takeover', tags: ['sessions'], summary: 'Pause the agent so a human can drive through this control session' } })
  .input(TakeoverBodySchema.extend({ id: z.string().max(200) }))
  .output(TakeoverResultSchema)
  .mutation(({ ctx, input: { id, ...body } }) => takeOver(ctx.services, ctx.principal, ctx.requestId, id, body));

export const releaseProcedure = writeGated('operator:sessions:control')
  .meta({ openapi: { method: 'POST', path: '/sessions/{id}/release', tags: ['sessions'], summary: 'Drop the takeover hold and resume the task' }, successStatus: 202 })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(ReleaseResultSchema)
  .mutation(({ ctx, input }) => release(ctx.services, ctx.principal, ctx.requestId, input.id));

/** GET /v1/sessions/{id}/recording: the video of the session's latest watched stretch; the same scope as GET /v1/sessions/{id}. */
export const getSessionRecording = recordingEntryPoint({
  path: '/sessions/{id}/recording',
  scopes: ['operator:sessions:write'],
  subject: 'session',
  load: (services, principal, id) => loadSessionForCaller(services.db, principal, id),
  openapi: {
    operationId: 'getSessionRecording',
    summary: 'Download the video of what a live-view session watched (MP4, H.264)',
    description: '404 recording_not_found until a socket of the session was open and closed again; the latest watched stretch.',
    tags: ['sessions'],
    idPrefix: 'ses',
    notFound: 'session_not_found',
  },
});
