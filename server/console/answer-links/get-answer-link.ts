import { answerLinkView, AnswerLinkViewSchema } from '../../domain/answer-links/answer-link-actions';
import { answerLinkProcedure } from './answer-link-procedure';

/** The question, the task's prompt and steps, the device, and whether the link may take it over. */
export const getAnswerLinkProcedure = answerLinkProcedure.output(AnswerLinkViewSchema).query(({ ctx }) => answerLinkView(ctx.services.db, ctx.escalation));
