import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { operators } from '../../../db/schema';
import type { Actor, Principal } from '../keys/principal';
import { scopes } from '../keys/scopes';

const OPERATOR_MINTER_PREFIX = 'operator:';

/**
 * An operator acting on one organization from the console, as the domain's operations
 * see a caller: every scope, every Space of that organization and no other's (the same
 * tenancy checks as a key's, so another organization's resource stays a 404). Operators
 * hold no API key; `keyId` names the operator for what records a caller's key (the
 * minter of a session, which the gateway re-checks before relaying input), and what the
 * operations audit through `actorOf` is actor `system` with `via: "console"` and the
 * operator's name.
 */
export function operatorPrincipal(orgId: string, operator: string): Principal {
  return { keyId: `${OPERATOR_MINTER_PREFIX}${operator}`, orgId, scopes: new Set(scopes), spaceIds: [], entitled: true, origin: { via: 'console', operator } };
}

/** The actor of an operator's console change: `system`, audited with `via: "console"` and the operator's name. */
export function operatorActor(orgId: string, operator: string): Actor {
  return { orgId, actor: 'system', requestId: null, origin: { via: 'console', operator } };
}

/** Whether `minter` (a session's `key_id`) is an operator's, as operatorPrincipal names them. */
export function isOperatorMinter(minter: string): boolean {
  return minter.startsWith(OPERATOR_MINTER_PREFIX);
}

/**
 * For the gateway: whether a session an operator minted may still send input (an
 * operator of that name still exists); null when `minter` is not an operator's.
 */
export async function operatorMayControl(db: Db, minter: string): Promise<boolean | null> {
  if (!isOperatorMinter(minter)) return null;
  const [row] = await db.select({ id: operators.id }).from(operators).where(eq(operators.name, minter.slice(OPERATOR_MINTER_PREFIX.length))).limit(1);
  return row !== undefined;
}
