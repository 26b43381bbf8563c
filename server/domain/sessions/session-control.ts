import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { escalations, operators } from '../../../db/schema';
import { keyRecordLoader, type LoadKeyRecord } from '../keys/key-record';
import type { SessionRow } from './session-resource';

// Who may drive a live-view session's page. A session's minter (its `key_id`) is an API
// key, or a person without one: an operator in the console (`operator:<name>`) or an
// escalation's answer link (`answer_url:<escalation id>`).

const OPERATOR_MINTER_PREFIX = 'operator:';
const ANSWER_LINK_MINTER_PREFIX = 'answer_url:';
// How long a key's revocation may go unnoticed by the input check (as for API requests).
const KEY_CHECK_TTL_MS = 1_000;

export function operatorMinter(operator: string): string {
  return `${OPERATOR_MINTER_PREFIX}${operator}`;
}

export function isOperatorMinter(minter: string): boolean {
  return minter.startsWith(OPERATOR_MINTER_PREFIX);
}

export function answerLinkMinter(escalationId: string): string {
  return `${ANSWER_LINK_MINTER_PREFIX}${escalationId}`;
}

/** Whether a session an operator minted may still send input (an operator of that name still exists); null when `minter` is not an operator's. */
export async function operatorMayControl(db: Db, minter: string): Promise<boolean | null> {
  if (!isOperatorMinter(minter)) return null;
  const [row] = await db.select({ id: operators.id }).from(operators).where(eq(operators.name, minter.slice(OPERATOR_MINTER_PREFIX.length))).limit(1);
  return row !== undefined;
}

/** Whether a session an answer link minted may still send input (its escalation is still pending); null when `minter` is not an answer link's. */
export async function answerLinkMayControl(db: Db, minter: string): Promise<boolean | null> {
  if (!minter.startsWith(ANSWER_LINK_MINTER_PREFIX)) return null;
  const id = minter.slice(ANSWER_LINK_MINTER_PREFIX.length);
  if (!/^[0-9a-f-]{36}$/.test(id)) return false;
  const [row] = await db.select({ status: escalations.status }).from(escalations).where(eq(escalations.id, id));
  return row?.status === 'pending';
}

/**
 * The input rule of a live-view session, asked on every input (spec): a control session,
 * holding an unexpired takeover, whose minter may still control it (a key still holding
 * operator:sessions:control, an operator who still exists, a pending escalation's link).
 * A minter's answer is kept KEY_CHECK_TTL_MS, so a burst of input reads it once.
 */
export class SessionControl {
  readonly #db: Db;
  readonly #loadKey: LoadKeyRecord;
  readonly #minterChecks = new Map<string, { at: number; allowed: Promise<boolean> }>();

  constructor(db: Db) {
    this.#db = db;
    this.#loadKey = keyRecordLoader(db);
  }

  /** Why the session may not send input now, in words for the client; null when it may. */
  async inputRefusal(session: SessionRow): Promise<string | null> {
    if (session.mode !== 'control') return 'A watch session cannot send input.';
    if (session.holdTaskId === null || session.holdExpiresAt === null || session.holdExpiresAt <= new Date()) return 'Input needs a takeover held by this session.';
    if (!(await this.#minterMayControl(session.keyId))) return 'The key that minted this session can no longer control it.';
    return null;
  }

  #minterMayControl(minter: string): Promise<boolean> {
    const cached = this.#minterChecks.get(minter);
    if (cached !== undefined && Date.now() - cached.at < KEY_CHECK_TTL_MS) return cached.allowed;
    const allowed = this.#readMinter(minter).catch(() => false);
    this.#minterChecks.set(minter, { at: Date.now(), allowed });
    return allowed;
  }

  async #readMinter(minter: string): Promise<boolean> {
    const person = (await operatorMayControl(this.#db, minter)) ?? (await answerLinkMayControl(this.#db, minter));
    if (person !== null) return person;
    const record = await this.#loadKey(minter);
    return record !== null && record.revokedAt === null && record.scopes.includes('operator:sessions:control');
  }
}
