import { z } from 'zod';

/** An operator's answer to an escalation; an empty answer is none. */
export const AnswerEscalationInputSchema = z.object({ id: z.string().max(200), answer: z.string().max(20_000), cleared: z.boolean() });
