import { takeOverAsAnswerLink } from '../../domain/answer-links/answer-link-actions';
import { OperatorTakeoverSchema } from '../../domain/console/operator-live';
import { answerLinkProcedure } from './answer-link-procedure';

/** Takes the escalation's device over from the answer page: a control session and its hold. */
export const takeOverAnswerLinkDeviceProcedure = answerLinkProcedure
  .output(OperatorTakeoverSchema)
  .mutation(({ ctx }) => takeOverAsAnswerLink(ctx.services, ctx.escalation, ctx.requestId));
