import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { operators } from '../../../db/schema';
import type { Principal } from '../keys/principal';
import type { Operator } from './operator-accounts';

const OPERATOR_MINTER_PREFIX = 'console:';

/**
 * An operator acting on one organization's device from the console, as the session and
 * takeover operations of /v1 take a caller: organization-wide, with the session scopes,
 * named `console:<operator id>` where a key id would be (the minter of a session, which
 * the gateway re-checks before relaying input), and audited with actor `system` and
 * `{via: "console", operator: <name>}`.
 */
export function operatorPrincipal(orgId: string, operator: Operator): Principal {
  return {
    keyId: `${OPERATOR_MINTER_PREFIX}${operator.id}`,
    orgId,
    scopes: new Set(['operator:sessions:write', 'operator:sessions:control', 'operator:escalations:read']),
    spaceIds: [],
    entitled: true,
    origin: { via: 'console', operator: operator.name },
  };
}

/**
 * For the gateway: whether a session minted by an operator may still send input (the
 * operator still exists); null when `minter` is not an operator's.
 */
export async function operatorMayControl(db: Db, minter: string): Promise<boolean | null> {
  if (!minter.startsWith(OPERATOR_MINTER_PREFIX)) return null;
  const id = minter.slice(OPERATOR_MINTER_PREFIX.length);
  if (!/^[0-9a-f-]{36}$/.test(id)) return false;
  const [row] = await db.select({ id: operators.id }).from(operators).where(eq(operators.id, id));
  return row !== undefined;
}
