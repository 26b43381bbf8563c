import type { Scope } from './scopes';

/** Who is calling: the authenticated key and what it may do. */
export interface Principal {
  keyId: string;
  orgId: string;
  scopes: ReadonlySet<Scope>;
  /** Empty means organization-wide. */
  spaceIds: readonly string[];
  entitled: boolean;
  /**
   * Set when a person acts without an API key (an operator in the console, the holder of
   * an escalation's answer_url): `keyId` then names them (`operator:<name>`,
   * `answer_url:<escalation id>`), and their changes are audited with actor `system`
   * (CONTRACT.md: a key id or `system`) and this origin in the details.
   */
  origin?: HumanOrigin;
  /**
   * Set when an MCP client acts with an OAuth access token (docs/api.md, "MCP
   * authorization"): the grant (`mcpg_...`) a person approved with this key. Changes stay
   * the key's (actor its key id) and name the grant in their audit details.
   */
  oauthGrantId?: string;
}

/** Who acted, for a change made without an API key. */
export type HumanOrigin = { via: 'console'; operator: string } | { via: 'answer_url'; escalation_id: string };

/** Who caused a change, as recorded on audit events. */
export interface Actor {
  orgId: string;
  /** Key id, or `system` for the service's own moves. */
  actor: string;
  requestId: string | null;
  /**
   * Who made a change the service or an operator made for the organization (`actor`
   * `system`): written into every audit event's details, so an operator's console action
   * names them.
   */
  origin?: HumanOrigin;
  /** The MCP OAuth grant the key acted through, written into audit details as `oauth_grant_id`. */
  oauthGrantId?: string;
}

export function actorOf(principal: Principal, requestId: string): Actor {
  if (principal.origin !== undefined) return { orgId: principal.orgId, actor: 'system', requestId, origin: principal.origin };
  if (principal.oauthGrantId !== undefined) return { orgId: principal.orgId, actor: principal.keyId, requestId, oauthGrantId: principal.oauthGrantId };
  return { orgId: principal.orgId, actor: principal.keyId, requestId };
}

export function systemActor(orgId: string): Actor {
  return { orgId, actor: 'system', requestId: null };
}
