import { ApiError } from '../../core/errors';
import type { Principal } from '../keys/principal';

export function isOrganizationWide(principal: Principal): boolean {
  return principal.spaceIds.length === 0;
}

/**
 * The Space a list call is confined to, or null for the whole organization. An
 * organization-wide key may omit `space_id`; a Space-scoped key must name one it holds.
 */
export function listSpace(principal: Principal, spaceId: string | undefined): string | null {
  if (isOrganizationWide(principal)) return spaceId ?? null;
  if (spaceId === undefined) {
    throw new ApiError('invalid_request', { param: 'space_id', message: 'A Space-scoped key must name a space_id it holds on list calls.' });
  }
  if (!principal.spaceIds.includes(spaceId)) throw new ApiError('insufficient_scope');
  return spaceId;
}

/**
 * For a resource already found inside the caller's organization: a Space the key does
 * not hold is 403 (CONTRACT.md); resources of other organizations never reach here, they
 * are 404 at lookup. Organization-level resources (null Space) need an org-wide key.
 */
export function assertSpaceAccess(principal: Principal, resourceSpaceId: string | null): void {
  if (isOrganizationWide(principal)) return;
  if (resourceSpaceId === null || !principal.spaceIds.includes(resourceSpaceId)) throw new ApiError('insufficient_scope');
}
