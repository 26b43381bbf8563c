import { eq } from 'drizzle-orm';
import { escalations } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { answerAsAnswerLink } from '../answer-links/answer-link-actions';
import type { EscalationRow } from '../escalations/escalation-resource';
import { resolveEscalation, type ResolveDeps, type ResolveEscalationBody, type ResolveEscalationResult } from '../escalations/resolve-escalation';
import { parsePublicId } from '../ids';
import type { SessionOperationDeps } from '../sessions/session-operations';
import type { Operator } from './operator-accounts';

export interface OperatorAnswer {
  /** The escalation's public id. */
  id: string;
  /** The answer the task resumes with (empty text for none); checked against the escalation's answer_schema. */
  answer: NonNullable<ResolveEscalationBody['answer']>;
  /** Whether the wall is down; false fails the task. */
  cleared: boolean;
}

/**
 * An operator answers an escalation from the console, of any organization: the same
 * resolution as the destination's resolve callback, with `resolved_by:
 * "operator:<name>"` and audited `via: "console"`. A malformed or unknown id is 404
 * escalation_not_found; answering twice is `applied: false`.
 */
export async function answerEscalationAsOperator(deps: ResolveDeps, operator: Operator, answer: OperatorAnswer): Promise<ResolveEscalationResult> {
  const id = parsePublicId('escalation', answer.id);
  const [row] = id === null ? [] : await deps.db.select().from(escalations).where(eq(escalations.id, id));
  if (row === undefined) throw new ApiError('escalation_not_found');
  return resolveEscalation(
    deps,
    row,
    { answer: answer.answer === '' ? undefined : answer.answer, cleared: answer.cleared, resolved_by: `operator:${operator.name}` },
    { requestId: null, via: 'console' },
  );
}

/** Who answers from a page of the service: a signed-in operator, or the holder of an opened answer link (its own escalation). */
export type EscalationAnswerer = { operator: Operator } | { link: EscalationRow };

/** An answer given on the console's escalation page or on an answer link's page, as its answerer gives it. */
export function answerEscalation(deps: SessionOperationDeps, answerer: EscalationAnswerer, requestId: string, answer: OperatorAnswer): Promise<ResolveEscalationResult> {
  return 'link' in answerer ? answerAsAnswerLink(deps, answerer.link, requestId, answer) : answerEscalationAsOperator(deps, answerer.operator, answer);
}
