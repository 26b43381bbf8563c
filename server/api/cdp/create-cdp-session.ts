import { z } from 'zod';
import { CdpSessionSchema } from '../../domain/cdp/cdp-session-resource';
import { createCdpSession, CreateCdpSessionBodySchema } from '../../domain/cdp/create-cdp-session';
import { writeGated } from '../../trpc/procedures';

export const createCdpSessionProcedure = writeGated('operator:sessions:control')
  .meta({
    openapi: {
      method: 'POST',
      path: '/devices/{id}/cdp',
      tags: ['cdp'],
      summary: 'Open DevTools (CDP) access to a device for your own Puppeteer or Playwright',
      description:
        'Returns `cdp_url`, a WebSocket URL of this service that `puppeteer.connect({ browserWSEndpoint: cdp_url })` and Playwright\'s `chromium.connectOverCDP(cdp_url)` take as is; its http form (`ws` → `http`) serves `/json/version` for clients that start from `browserURL` / `--browserUrl`. Its `token` query parameter is a secret: shown only here, stored as a hash, masked in the service\'s logs, good for one connection at a time, again and again, until the session is deleted or reaches `expires_at` (`ttl_secs` 60..3600, default 900). The socket speaks the Chrome DevTools Protocol at browser level; the client sees only its device (a browser whose default context is the device) and the methods listed in docs/api.md, "CDP access"; others are answered with a CDP error. While a connection is open the device\'s task slot is held (task submits and sleep are 409 `device_busy`, the device does not idle-suspend). A connection ends when the client disconnects or calls `Browser.close` (the device\'s browser stays; the slot is free until the next connection, which is 409 `device_busy` while a task holds it), or with 1012 `service_restart` (the instance restarts or hands the device over; the slot stays held); the same `cdp_url` connects again, to any instance. The session closes at `expires_at`, on `DELETE /v1/cdp_sessions/{id}`, when the creating key is revoked, or when the device is deleted, slept or lost. A refused handshake is answered over HTTP: 401 `invalid_session_token`, 410 `session_expired` (connected now, deleted or expired), 409 `device_busy` or `device_not_ready`, 410 `device_terminated`. Metered as `session_duration`, from creation until closed or expired.',
    },
    successStatus: 201,
  })
  .input(CreateCdpSessionBodySchema.extend({ id: z.string().max(200) }))
  .output(CdpSessionSchema)
  .mutation(({ ctx, input: { id, ...body } }) =>
    createCdpSession(ctx.services.db, ctx.services.config.http.publicUrl, { principal: ctx.principal, requestId: ctx.requestId, devicePublicId: id, body }),
  );
