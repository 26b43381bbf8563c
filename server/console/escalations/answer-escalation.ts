import { answerEscalation } from '../../domain/console/answer-escalation';
import { z } from 'zod';
import { AnswerValueSchema, ResolveEscalationResultSchema } from '../../domain/escalations/resolve-escalation';
import { ANSWER_ACCESS_HEADER, resolveCaller } from '../../http/resolve-caller';
import { consoleProcedure } from '../console-procedures';

/**
 * Answers an escalation from the console or from its answer page, the caller deciding.
 * With the access token an opened answer link was traded for (`x-svc-answer-access`), the
 * link answers its own escalation (`resolved_by: "answer_url"`; answer-link-procedure.ts's
 * refusals), and the link stops working; otherwise the signed-in operator answers any
 * organization's (`resolved_by: "operator:<name>"`, 404 escalation_not_found). An answer
 * the escalation's `answer_schema` does not take is 400 with `param: "answer"`.
 */
export const answerEscalationProcedure = consoleProcedure
  .use(async ({ ctx, getRawInput, next }) => {
    const { escalation_id: subject } = (await getRawInput()) as { escalation_id?: unknown };
    const answerer =
      ctx.req.headers[ANSWER_ACCESS_HEADER] === undefined
        ? { operator: (await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'operator', from: 'console_api' })).operator }
        : { link: (await resolveCaller(ctx.services, ctx.req, ctx.res, { kind: 'answer_link' }, { subject: typeof subject === 'string' ? subject : '' })).escalation };
    return next({ ctx: { answerer } });
  })
  // An empty text answer is none.
  .input(z.object({ escalation_id: z.string().max(200), answer: AnswerValueSchema, cleared: z.boolean() }))
  .output(ResolveEscalationResultSchema)
  .mutation(({ ctx, input: { escalation_id, ...answer } }) => answerEscalation(ctx.services, ctx.answerer, ctx.requestId, { id: escalation_id, ...answer }));
