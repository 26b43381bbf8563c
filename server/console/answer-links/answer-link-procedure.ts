import { z } from 'zod';
import { resolveCaller } from '../../http/resolve-caller';
import { consoleProcedure } from '../console-procedures';

/**
 * A call of an opened answer link's page (no console sign-in): the escalation named in
 * the input, opened by the access token in `x-svc-answer-access`, still pending. A wrong
 * token is 401 invalid_answer_link and counts against the client's address like every
 * failed bearer (429 rate_limited past the limit); a closed escalation is 410
 * escalation_closed with a sentence saying how it ended.
 */
export const answerLinkProcedure = consoleProcedure.input(z.object({ escalation_id: z.string().max(200) })).use(async ({ ctx, input, next }) => {
  const { escalation } = await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'answer_link' }, { subject: input.escalation_id });
  return next({ ctx: { escalation } });
});
