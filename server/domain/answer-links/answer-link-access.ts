import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { escalations } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { dbNow } from '../db-clock';
import { matchesAnswerAccessToken, matchesAnswerLinkSecret, mintAnswerAccessToken } from '../escalations/answer-link-secret';
import type { EscalationRow } from '../escalations/escalation-resource';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { answerLinkMinter } from '../sessions/session-control';

// The doors of an escalation's answer_url page (docs/api.md, "Answer links"). The link's
// secret opens it once: opening trades it for an access token the page keeps for its
// visit, and marks every link of the escalation used, so a second visit (the link
// forwarded, or opened again elsewhere) is refused. Everything then needs the access
// token and a pending escalation: answered, expired or canceled, the page is told so.

const CLOSED_MESSAGES = {
  resolved: 'This escalation was already answered.',
  expired: 'This escalation expired before it was answered.',
  canceled: 'This escalation was canceled: the task no longer waits for it.',
} as const;

function assertPending(row: EscalationRow): void {
  if (row.status !== 'pending') throw new ApiError('escalation_closed', { message: CLOSED_MESSAGES[row.status] });
}

/**
 * Opens an answer link: 401 invalid_answer_link for an unknown id or a secret that is not
 * one of the escalation's (another escalation's included: one answer for all), 410
 * escalation_closed once it is not pending, 410 answer_link_used when it was opened
 * before. Returns the page's access token, shown this once; only its hash is stored.
 */
export async function openAnswerLink(db: Db, escalationPublicId: string, secret: string): Promise<{ access_token: string }> {
  const id = parsePublicId('escalation', escalationPublicId);
  if (id === null) throw new ApiError('invalid_answer_link');
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(escalations).where(eq(escalations.id, id)).for('update');
    if (row === undefined || !matchesAnswerLinkSecret(secret, row.answerLinkHashes)) throw new ApiError('invalid_answer_link');
    assertPending(row);
    if (row.answerLinkRedeemedAt !== null) throw new ApiError('answer_link_used');
    const { token, hash } = mintAnswerAccessToken();
    await tx.update(escalations).set({ answerLinkRedeemedAt: dbNow(), answerAccessHash: hash }).where(eq(escalations.id, row.id));
    await recordAudit(tx, { orgId: row.orgId, actor: 'system', requestId: null }, {
      action: 'operator.escalation.answer_link_opened',
      resourceType: 'escalation',
      resourceId: toPublicId('escalation', row.id),
      spaceId: row.spaceId,
      details: { via: 'answer_url', task_id: toPublicId('task', row.taskId) },
    });
    return { access_token: token };
  });
}

/** The pending escalation an answer page's access token opens: 401 invalid_answer_link, or 410 escalation_closed. */
export async function authenticateAnswerAccess(db: Db, escalationPublicId: string, token: string | null): Promise<EscalationRow> {
  const id = parsePublicId('escalation', escalationPublicId);
  if (id === null || token === null) throw new ApiError('invalid_answer_link');
  const [row] = await db.select().from(escalations).where(eq(escalations.id, id));
  if (row === undefined || !matchesAnswerAccessToken(token, row.answerAccessHash)) throw new ApiError('invalid_answer_link');
  assertPending(row);
  return row;
}

/**
 * The holder of an answer link as the session operations take a caller: the escalation's
 * organization and Space only, named `answer_url:<escalation id>` where a key id would
 * be, audited with actor `system` and `{via: "answer_url", escalation_id}`.
 */
export function answerLinkPrincipal(row: EscalationRow): Principal {
  return {
    keyId: answerLinkMinter(row.id),
    orgId: row.orgId,
    scopes: new Set(['operator:sessions:write', 'operator:sessions:control']),
    spaceIds: [row.spaceId],
    entitled: true,
    origin: { via: 'answer_url', escalation_id: toPublicId('escalation', row.id) },
  };
}

export function isAnswerLinkMinter(minter: string, row: EscalationRow): boolean {
  return minter === answerLinkMinter(row.id);
}
