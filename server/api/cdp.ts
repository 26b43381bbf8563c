import { z } from 'zod';
import { deleteCdpSession } from '../domain/cdp/cdp-connection';
import { CdpSessionSchema, cdpUrl, loadCdpSessionForCaller } from '../domain/cdp/cdp-session-resource';
import { createCdpSession, CreateCdpSessionBodySchema } from '../domain/cdp/create-cdp-session';
import { SOCKET_PATHS } from '../domain/socket-paths';
import { writeGated } from '../trpc/procedures';
import { rawEntryPoint } from './entry-point';
import { recordingEntryPoint } from './recording-route';

// /v1 CDP sessions: DevTools access to a device for the client's own Puppeteer or Playwright.

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

export const deleteCdpSessionProcedure = writeGated('operator:sessions:control')
  .meta({
    openapi: {
      method: 'DELETE',
      path: '/cdp_sessions/{id}',
      tags: ['cdp'],
      summary: 'Close a CDP session: its URL stops working, its connection closes within a second and the device\'s slot is free',
    },
    successStatus: 204,
  })
  .input(z.strictObject({ id: z.string().max(200) }))
  .output(z.void())
  .mutation(({ ctx, input }) => deleteCdpSession(ctx.services.db, ctx.principal, ctx.requestId, input.id));

/**
 * GET /v1/cdp_sessions/{id}/recording: the video of what the device's page showed while
 * the CDP connection was open; the scope and tenancy of a live-view session's recording.
 */
export const getCdpSessionRecording = recordingEntryPoint({
  path: '/cdp_sessions/{id}/recording',
  scopes: ['operator:sessions:write'],
  subject: 'cdp_session',
  load: (services, principal, id) => loadCdpSessionForCaller(services.db, principal, id, false),
  openapi: {
    operationId: 'getCdpSessionRecording',
    summary: "Download the video of what a CDP session's connection showed (MP4, H.264)",
    description:
      "The device's page from the connection's opening to its end (close, DELETE, expiry, key revocation, the device's end, or the service's stop). 404 recording_not_found until the connection ended and its video was stored, and for a session never connected.",
    tags: ['cdp'],
    idPrefix: 'cdp',
    notFound: 'cdp_session_not_found',
  },
});

/**
 * GET /v1/cdp_sessions/{id}/devtools/json/version?token=…: the DevTools HTTP endpoint's
 * one answer clients need, for those that start from an http URL (Puppeteer 25's
 * `browserURL`, chrome-devtools-mcp's `--browserUrl`): given `cdp_url` with `ws` → `http`,
 * they append `/json/version` to its path, keep its query, and connect to the
 * `webSocketDebuggerUrl` it answers, which is `cdp_url` itself. The secret is checked
 * (without being used: the socket uses it) under the failed-authentication throttle, as
 * at the handshake; a refusal never repeats it. `/json/list` and the rest of Chrome's HTTP
 * endpoint are not served, nor documented in /v1/openapi.json (docs/api.md, "Client compatibility").
 */
export const getCdpVersion = rawEntryPoint({
  method: 'GET',
  // The CDP socket's own path, under /v1.
  path: `${SOCKET_PATHS.cdp.slice('/v1'.length)}/json/version`,
  caller: { kind: 'cdp_secret' },
  subject: 'id',
  async handle({ res, caller, services }) {
    // Only a secret that matched gets here, so the answer repeats what its caller sent.
    const version = { 'Protocol-Version': '1.3', webSocketDebuggerUrl: cdpUrl(services.config.http.publicUrl, caller.session.id, caller.secret) };
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(version));
  },
});
