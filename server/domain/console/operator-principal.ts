import type { Actor, Principal } from '../keys/principal';
import { scopes } from '../keys/scopes';
import { operatorMinter } from '../sessions/session-control';

/**
 * An operator acting on one organization from the console, as the domain's operations
 * see a caller: every scope, every Space of that organization and no other's (the same
 * tenancy checks as a key's, so another organization's resource stays a 404). Operators
 * hold no API key; `keyId` names the operator for what records a caller's key (the
 * minter of a session, re-checked by sessions/session-control.ts before input), and what the
 * operations audit through `actorOf` is actor `system` with `via: "console"` and the
 * operator's name.
 */
export function operatorPrincipal(orgId: string, operator: string): Principal {
  return { keyId: operatorMinter(operator), orgId, scopes: new Set(scopes), spaceIds: [], entitled: true, origin: { via: 'console', operator } };
}

/** The actor of an operator's console change: `system`, audited with `via: "console"` and the operator's name. */
export function operatorActor(orgId: string, operator: string): Actor {
  return { orgId, actor: 'system', requestId: null, origin: { via: 'console', operator } };
}
