import { z } from 'zod';
import { AnswerValueSchema } from '../../domain/escalations/resolve-escalation';

/**
 * An operator's answer to an escalation; an empty text answer is none. It must match the
 * escalation's `answer_schema` (text, true/false, options, or credentials fields).
 */
export const AnswerEscalationInputSchema = z.object({ id: z.string().max(200), answer: AnswerValueSchema, cleared: z.boolean() });
