import { answerEscalationAsOperator } from '../../domain/console/answer-escalation';
import { ResolveEscalationResultSchema } from '../../domain/escalations/resolve-escalation';
import { operatorProcedure } from '../console-procedures';
import { AnswerEscalationInputSchema } from './escalation-schemas';

/** Answers an escalation as its destination's resolve callback would, resolved by `operator:<name>`. */
export const answerEscalationProcedure = operatorProcedure
  .input(AnswerEscalationInputSchema)
  .output(ResolveEscalationResultSchema)
  .mutation(({ ctx, input }) => answerEscalationAsOperator(ctx.services, ctx.operator, input));
