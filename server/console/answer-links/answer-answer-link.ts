import { z } from 'zod';
import { answerAsAnswerLink } from '../../domain/answer-links/answer-link-actions';
import { ResolveEscalationResultSchema } from '../../domain/escalations/resolve-escalation';
import { answerLinkProcedure } from './answer-link-procedure';

/** Answers the escalation from its answer page, `resolved_by: "answer_url"`; the link stops working. */
export const answerAnswerLinkProcedure = answerLinkProcedure
  .input(z.object({ answer: z.string().max(20_000), cleared: z.boolean() }))
  .output(ResolveEscalationResultSchema)
  .mutation(({ ctx, input }) => answerAsAnswerLink(ctx.services, ctx.escalation, ctx.requestId, input));
