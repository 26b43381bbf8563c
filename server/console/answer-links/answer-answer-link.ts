import { z } from 'zod';
import { answerAsAnswerLink } from '../../domain/answer-links/answer-link-actions';
import { AnswerValueSchema, ResolveEscalationResultSchema } from '../../domain/escalations/resolve-escalation';
import { answerLinkProcedure } from './answer-link-procedure';

/**
 * Answers the escalation from its answer page, `resolved_by: "answer_url"`; the link stops
 * working. The answer is any the escalation's `answer_schema` takes (text, true/false,
 * options, credentials fields); one that does not fit is 400 with `param: "answer"`.
 */
export const answerAnswerLinkProcedure = answerLinkProcedure
  .input(z.object({ answer: AnswerValueSchema, cleared: z.boolean() }))
  .output(ResolveEscalationResultSchema)
  .mutation(({ ctx, input }) => answerAsAnswerLink(ctx.services, ctx.escalation, ctx.requestId, input));
