import { z } from 'zod';
import { releaseAsAnswerLink } from '../../domain/answer-links/answer-link-actions';
import { ReleaseResultSchema } from '../../domain/sessions/session-operations';
import { answerLinkProcedure } from './answer-link-procedure';

/** Releases the answer page's takeover; the task resumes (and, as on /v1, the escalation is settled). */
export const releaseAnswerLinkDeviceProcedure = answerLinkProcedure
  .input(z.object({ session_id: z.string().max(200) }))
  .output(ReleaseResultSchema)
  .mutation(({ ctx, input }) => releaseAsAnswerLink(ctx.services, ctx.escalation, ctx.requestId, input.session_id));
