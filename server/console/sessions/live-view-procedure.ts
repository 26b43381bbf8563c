import { z } from 'zod';
import { answerLinkLiveViewCaller } from '../../domain/answer-links/answer-link-actions';
import { operatorLiveViewCaller } from '../../domain/console/operator-live';
import { resolveCaller } from '../../http/resolve-caller';
import { consoleProcedure } from '../console-procedures';

/**
 * A call of a device's live view, from the console's pages or an answer_url's page: the
 * caller decides what it reaches. Naming an escalation, it is the answer link the page
 * opened (`x-svc-answer-access`; answer-link-procedure.ts's refusals); otherwise the
 * signed-in operator (401 console_sign_in_required).
 */
export const liveViewProcedure = consoleProcedure.input(z.object({ escalation_id: z.string().max(200).optional() })).use(async ({ ctx, input, next }) => {
  const liveViewCaller =
    input.escalation_id === undefined
      ? operatorLiveViewCaller((await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'operator', from: 'console_api' })).operator)
      : answerLinkLiveViewCaller((await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'answer_link' }, { subject: input.escalation_id })).escalation);
  return next({ ctx: { liveViewCaller } });
});
