import { z } from 'zod';
import { AnswerValueSchema } from '../../domain/escalations/resolve-escalation';
import { OrgIdSchema } from '../console-fields';

/**
 * An answer to an escalation; an empty text answer is none. It must match the
 * escalation's `answer_schema` (text, true/false, options, or credentials fields).
 */
export const AnswerEscalationInputSchema = z.object({ escalation_id: z.string().max(200), answer: AnswerValueSchema, cleared: z.boolean() });

/** The inbox's filter: one organization's escalations, or (absent) every organization's. */
export const PendingEscalationsInputSchema = z.object({ org_id: OrgIdSchema.optional() }).optional();
