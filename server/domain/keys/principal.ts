import type { Scope } from './scopes';

/** Who is calling: the authenticated key and what it may do. */
export interface Principal {
  keyId: string;
  orgId: string;
  scopes: ReadonlySet<Scope>;
  /** Empty means organization-wide. */
  spaceIds: readonly string[];
  entitled: boolean;
}

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
  origin?: { via: 'console'; operator: string };
}

export function actorOf(principal: Principal, requestId: string): Actor {
  return { orgId: principal.orgId, actor: principal.keyId, requestId };
}

export function systemActor(orgId: string): Actor {
  return { orgId, actor: 'system', requestId: null };
}
