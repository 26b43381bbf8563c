import { z } from 'zod';
import { answerLinkLiveViewCaller } from '../domain/answer-links/answer-link-actions';
import { operatorLiveViewCaller } from '../domain/console/operator-live';
import { endLiveSession, LiveTakeoverSchema, releaseTakeover, takeOverDevice, watchDevice } from '../domain/sessions/live-view-sessions';
import { ReleaseResultSchema } from '../domain/sessions/session-operations';
import { MintedSessionSchema } from '../domain/sessions/session-resource';
import { resolveCaller } from '../http/resolve-caller';
import { consoleProcedure } from './console-procedures';

// A device's live view, from the console (the operator) and the answer_url page (its escalation's access token).

/**
 * A call of a device's live view, from the console's pages or an answer_url's page: the
 * caller decides what it reaches. Naming an escalation, it is the answer link the page
 * opened (`x-svc-answer-access`; the refusals of answer-links.ts's answerLinkProcedure); otherwise the
 * signed-in operator (401 console_sign_in_required).
 */
const liveViewProcedure = consoleProcedure.input(z.object({ escalation_id: z.string().max(200).optional() })).use(async ({ ctx, input, next }) => {
  const liveViewCaller =
    input.escalation_id === undefined
      ? operatorLiveViewCaller((await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'operator', from: 'console_api' })).operator)
      : answerLinkLiveViewCaller((await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'answer_link' }, { subject: input.escalation_id })).escalation);
  return next({ ctx: { liveViewCaller } });
});

/** A watch session of a device for a page's live view, minted under /v1's rules and audited with its caller. */
export const watchDeviceProcedure = liveViewProcedure
  .input(z.object({ device_id: z.string().max(200) }))
  .output(MintedSessionSchema)
  .mutation(({ ctx, input }) => watchDevice(ctx.services, ctx.liveViewCaller, ctx.requestId, input.device_id));

/** Takes a device over from a page: a control session and its takeover hold, under /v1's rules. */
export const takeOverDeviceProcedure = liveViewProcedure
  .input(z.object({ device_id: z.string().max(200), reason: z.string().max(1000).optional() }))
  .output(LiveTakeoverSchema)
  .mutation(({ ctx, input }) => takeOverDevice(ctx.services, ctx.liveViewCaller, ctx.requestId, input.device_id, input.reason));

/** Releases a page's takeover; the task resumes (POST /v1/sessions/{id}/release's rules). */
export const releaseTakeoverProcedure = liveViewProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(ReleaseResultSchema)
  .mutation(({ ctx, input }) => releaseTakeover(ctx.services, ctx.liveViewCaller, ctx.requestId, input.session_id));

/** Ends a session a page minted (the page closed): revoked, a hold dropped and its task resumed. */
export const endSessionProcedure = liveViewProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(z.object({ ended: z.literal(true) }))
  .mutation(async ({ ctx, input }) => {
    await endLiveSession(ctx.services, ctx.liveViewCaller, ctx.requestId, input.session_id);
    return { ended: true as const };
  });
