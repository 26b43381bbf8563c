import { z } from 'zod';
import { OrgIdSchema } from '../console-fields';

/** An operator's answer to an escalation; an empty answer is none. */
export const AnswerEscalationInputSchema = z.object({ id: z.string().max(200), answer: z.string().max(20_000), cleared: z.boolean() });

/** The inbox's filter: one organization's escalations, or (absent) every organization's. */
export const PendingEscalationsInputSchema = z.object({ org_id: OrgIdSchema.optional() }).optional();
