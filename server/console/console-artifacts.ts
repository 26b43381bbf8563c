import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendStepScreenshot, sendTaskRecording } from '../api/task-artifact-bytes';
import { ApiError } from '../core/errors';
import { operatorTaskRow } from '../domain/console/organization-activity';
import { decodePathSegment } from '../http/path-segment';
import type { Services } from '../services/services';
import { sendErrorResponse } from '../trpc/send-error';
import { CONSOLE_ARTIFACT_PATHS, CONSOLE_ARTIFACTS_PREFIX } from './console-artifact-urls';
import { resolveCaller } from '../http/resolve-caller';

/** A route's template as a pattern of the path under the prefix (a trailing slash allowed), its parameters as named groups. */
const pattern = (template: string) => new RegExp(`^${template.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}/?$`);
const STEP_SCREENSHOT = pattern(CONSOLE_ARTIFACT_PATHS.stepScreenshot);
const RECORDING = pattern(CONSOLE_ARTIFACT_PATHS.recording);

/**
 * The console's byte routes: a task's step screenshots and its recording for the signed-in
 * operator, so a console page can show them in <img> and <video>, which cannot send an
 * API key or the console's CSRF header (x-svc-console). Why the cookie alone is safe here:
 * - GET and HEAD only (405 otherwise), and they change nothing: the CSRF header guards the
 *   console API's changes, and a request that changes nothing needs no CSRF defence.
 * - The cookie is SameSite=Strict: no page of another site makes the browser send it.
 *   A sibling site (another subdomain) would, so a request whose Sec-Fetch-Site is
 *   `same-site` or `cross-site` is refused (403 console_header_required) before the cookie
 *   is read (resolveCaller's `console_page` rule).
 * - Answers carry Cross-Origin-Resource-Policy: same-origin, so no other origin's page may
 *   embed the bytes even where a browser sent the cookie, and nosniff (sendObject).
 * Then the same checks as the console procedures: the address's failed-authentication
 * throttle (429), the sign-in cookie's operator (401 console_sign_in_required), the task of
 * any organization (operators read them all; 404 task_not_found), and the bytes sent the
 * one way the /v1 routes send them (task-artifact-bytes.ts: Range, 206, 416, 404).
 */
export function createConsoleArtifactsHandler(services: Services): (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void> {
  return async function handleConsoleArtifact(req, res, requestId) {
    try {
      res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError('method_not_allowed', { headers: { Allow: 'GET, HEAD' } });
      await services.authThrottle.refuseIfBlocked(req);
      await resolveCaller(services, req, res, { kind: 'operator', from: 'console_page' });
      const path = (req.url ?? '').split('?', 1)[0]!.slice(CONSOLE_ARTIFACTS_PREFIX.length);
      const screenshot = STEP_SCREENSHOT.exec(path)?.groups;
      if (screenshot !== undefined) {
        const task = await operatorTaskRow(services.db, decodePathSegment(screenshot.id!));
        return await sendStepScreenshot(services, req, res, task.id, screenshot.seq!);
      }
      const recording = RECORDING.exec(path)?.groups;
      if (recording !== undefined) {
        const task = await operatorTaskRow(services.db, decodePathSegment(recording.id!));
        return await sendTaskRecording(services, req, res, task);
      }
      throw new ApiError('not_found');
    } catch (error) {
      sendErrorResponse(services.log, res, requestId, error);
    }
  };
}
