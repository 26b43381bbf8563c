import { z } from 'zod';
import { openAnswerLink } from '../domain/answer-links/answer-link-access';
import { answerLinkView, AnswerLinkViewSchema } from '../domain/answer-links/answer-link-actions';
import { resolveCaller } from '../http/resolve-caller';
import { consoleProcedure } from './console-procedures';

// The answer_url page's calls: no sign-in; the link's secret, then its access token.

/**
 * A call of an opened answer link's page (no console sign-in): the escalation named in
 * the input, opened by the access token in `x-svc-answer-access`, still pending. A wrong
 * token is 401 invalid_answer_link and counts against the client's address like every
 * failed bearer (429 rate_limited past the limit); a closed escalation is 410
 * escalation_closed with a sentence saying how it ended.
 */
const answerLinkProcedure = consoleProcedure.input(z.object({ escalation_id: z.string().max(200) })).use(async ({ ctx, input, next }) => {
  const { escalation } = await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'answer_link' }, { subject: input.escalation_id });
  return next({ ctx: { escalation } });
});

/**
 * Opens an escalation's answer_url: the secret (from the link's fragment, sent in the
 * body) for the page's access token, once. 401 invalid_answer_link (counted against the
 * address), 410 answer_link_used, 410 escalation_closed.
 */
export const openAnswerLinkProcedure = consoleProcedure
  .input(z.object({ escalation_id: z.string().max(200), secret: z.string().max(200) }))
  .output(z.object({ access_token: z.string() }))
  .mutation(({ ctx, input }) => ctx.services.authThrottle.check(ctx.req, () => openAnswerLink(ctx.services.db, input.escalation_id, input.secret)));

/** The question, the task's prompt and steps, the device, and whether the link may take it over. */
export const getAnswerLinkProcedure = answerLinkProcedure.output(AnswerLinkViewSchema).query(({ ctx }) => answerLinkView(ctx.services.db, ctx.escalation));
