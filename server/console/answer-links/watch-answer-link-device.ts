import { watchAsAnswerLink } from '../../domain/answer-links/answer-link-actions';
import { MintedSessionSchema } from '../../domain/sessions/session-resource';
import { answerLinkProcedure } from './answer-link-procedure';

/** A watch session of the escalation's device for the answer page's live view. */
export const watchAnswerLinkDeviceProcedure = answerLinkProcedure
  .output(MintedSessionSchema)
  .mutation(({ ctx }) => watchAsAnswerLink(ctx.services, ctx.escalation, ctx.requestId));
