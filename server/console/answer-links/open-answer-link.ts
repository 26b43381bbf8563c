import { z } from 'zod';
import { openAnswerLink } from '../../domain/answer-links/answer-link-access';
import { consoleProcedure } from '../console-procedures';

/**
 * Opens an escalation's answer_url: the secret (from the link's fragment, sent in the
 * body) for the page's access token, once. 401 invalid_answer_link (counted against the
 * address), 410 answer_link_used, 410 escalation_closed.
 */
export const openAnswerLinkProcedure = consoleProcedure
  .input(z.object({ escalation_id: z.string().max(200), secret: z.string().max(200) }))
  .output(z.object({ access_token: z.string() }))
  .mutation(({ ctx, input }) => ctx.services.authThrottle.check(ctx.req, () => openAnswerLink(ctx.services.db, input.escalation_id, input.secret)));
