import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { sessions, tasks } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { EscalationDetailSchema, escalationDetail } from '../escalations/escalation-detail';
import { noStepScreenshots } from '../tasks/task-steps';
import type { EscalationRow } from '../escalations/escalation-resource';
import { resolveEscalation, type ResolveEscalationBody, type ResolveEscalationResult } from '../escalations/resolve-escalation';
import { toPublicId } from '../ids';
import type { LiveViewCaller } from '../sessions/live-view-sessions';
import { clampTtlSecs } from '../sessions/mint-session';
import { revokeSession, type SessionOperationDeps } from '../sessions/session-operations';
import { answerLinkPrincipal, isAnswerLinkMinter } from './answer-link-access';

// What the holder of an opened answer link does, each on a pending escalation the page's
// access token opened (answer-link-access.ts): read it, watch the device, take it over
// and release it (sessions/live-view-sessions.ts, with the link as the caller), and answer.

const LINK_SESSION_TTL_SECS = 900;

export const AnswerLinkViewSchema = EscalationDetailSchema.extend({ may_take_over: z.boolean() });
export type AnswerLinkView = z.infer<typeof AnswerLinkViewSchema>;

/**
 * Whether the link may take the device over. The escalation model has no per-escalation
 * permission: every kind (a question, a captcha, a login, a blocked page, a human's
 * takeover) is a wall on the device's page, and the page is where a person passes it,
 * so any pending escalation whose task still waits for it allows it. Once the task moved
 * on (canceled, resumed some other way) there is nothing to take over.
 */
async function mayTakeOver(db: Db, row: EscalationRow): Promise<boolean> {
  if (row.status !== 'pending' || row.subjectKind !== 'task') return false;
  const [task] = await db.select({ status: tasks.status }).from(tasks).where(eq(tasks.id, row.taskId));
  return task?.status === 'needs_human';
}

/** What an earlier answer's step shows on an answer page instead of the answer. */
export const HIDDEN_ANSWER_NOTE = '(an earlier answer, not shown on answer links)';

/**
 * The escalation as its answer page shows it. The task's earlier answers (its
 * `human_answer` steps) are not shown: an answer may be a password someone else gave,
 * and the link may have been forwarded; operators in the console see them. Nor are the
 * steps' screenshots, for the same reason: a screenshot of a past step may show what was
 * typed into an earlier form or a page the task has left, and the person answering sees
 * the device's page as it is now in the live view; `screenshot_url` is null.
 */
export async function answerLinkView(db: Db, row: EscalationRow): Promise<AnswerLinkView> {
  const [detail, allowed] = await Promise.all([escalationDetail(db, row, noStepScreenshots), mayTakeOver(db, row)]);
  const steps = detail.steps.map((step) => (step.action === 'human_answer' ? { ...step, note: HIDDEN_ANSWER_NOTE } : step));
  return { ...detail, steps, may_take_over: allowed };
}

/** A session of the escalation's device for the link, ending when the escalation would expire if sooner. */
function linkSessionTtl(row: EscalationRow): number {
  return clampTtlSecs(Math.min(LINK_SESSION_TTL_SECS, Math.floor((row.expiresAt.getTime() - Date.now()) / 1000)));
}

/** The link as a live view's caller: its escalation's device, the sessions it minted, a takeover while the task waits on it. */
export function answerLinkLiveViewCaller(row: EscalationRow): LiveViewCaller {
  return {
    principalOn: () => answerLinkPrincipal(row),
    deviceId: row.deviceId,
    minted: (minter) => isAnswerLinkMinter(minter, row),
    ttlSecs: () => linkSessionTtl(row),
    takeOverReason: () => 'answer_url',
    assertMayTakeOver: async (db) => {
      if (!(await mayTakeOver(db, row))) throw new ApiError('no_running_task', { message: 'The task no longer waits on this escalation.' });
    },
  };
}

/**
 * Answers through the link, as the resolve callback would, `resolved_by: "answer_url"`.
 * The link's sessions end with it: the page's access ends when the escalation is answered.
 */
export async function answerAsAnswerLink(
  deps: SessionOperationDeps,
  row: EscalationRow,
  requestId: string,
  answer: { answer: NonNullable<ResolveEscalationBody['answer']>; cleared: boolean },
): Promise<ResolveEscalationResult> {
  const result = await resolveEscalation(
    deps,
    row,
    { answer: answer.answer === '' ? undefined : answer.answer, cleared: answer.cleared, resolved_by: 'answer_url' },
    { requestId, via: 'answer_url' },
  );
  const principal = answerLinkPrincipal(row);
  const live = await deps.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.keyId, principal.keyId), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)));
  for (const session of live) await revokeSession(deps, principal, requestId, toPublicId('session', session.id)).catch(() => undefined);
  return result;
}
