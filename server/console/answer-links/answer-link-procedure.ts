import { z } from 'zod';
import { authenticateAnswerAccess } from '../../domain/answer-links/answer-link-access';
import { consoleProcedure } from '../console-procedures';

/** The header the answer page sends its access token in: never a URL, so never a log line. */
export const ANSWER_ACCESS_HEADER = 'x-svc-answer-access';

/**
 * A call of an opened answer link's page (no console sign-in): the escalation named in
 * the input, opened by the access token in `x-svc-answer-access`, still pending. A wrong
 * token is 401 invalid_answer_link and counts against the client's address like every
 * failed bearer (429 rate_limited past the limit); a closed escalation is 410
 * escalation_closed with a sentence saying how it ended.
 */
export const answerLinkProcedure = consoleProcedure.input(z.object({ escalation_id: z.string().max(200) })).use(async ({ ctx, input, next }) => {
  const header = ctx.req.headers[ANSWER_ACCESS_HEADER];
  const token = typeof header === 'string' ? header : null;
  const escalation = await ctx.services.authThrottle.check(ctx.req, () => authenticateAnswerAccess(ctx.services.db, input.escalation_id, token));
  return next({ ctx: { escalation } });
});
