import { z } from 'zod';
import { endSessionAsAnswerLink } from '../../domain/answer-links/answer-link-actions';
import { answerLinkProcedure } from './answer-link-procedure';

/** Ends a session the answer page minted (the page closed). */
export const endAnswerLinkSessionProcedure = answerLinkProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(z.object({ ended: z.literal(true) }))
  .mutation(async ({ ctx, input }) => {
    await endSessionAsAnswerLink(ctx.services, ctx.escalation, ctx.requestId, input.session_id);
    return { ended: true as const };
  });
