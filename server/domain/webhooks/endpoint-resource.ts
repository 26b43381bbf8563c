import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { webhookEndpoints } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { assertSpaceAccess } from '../spaces/space-access';
import { iso, isoOrNull } from '../time';

/** The Webhook endpoint resource exactly as the API returns it (spec table). Never the secret. */
export const WebhookEndpointSchema = z.object({
  id: z.string(),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  event_types: z.array(z.string()),
  failure_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  disabled_at: z.string().nullable(),
  last_error: z.string().nullable(),
  last_success_at: z.string().nullable(),
  space_id: z.string().nullable(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

/** The create response: the record plus the signing secret, the only time it is shown. */
export const CreatedWebhookEndpointSchema = WebhookEndpointSchema.extend({ secret: z.string() });
export type CreatedWebhookEndpoint = z.infer<typeof CreatedWebhookEndpointSchema>;

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

export function toWebhookEndpointResource(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: toPublicId('webhookEndpoint', row.id),
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    enabled: row.enabled,
    event_types: row.eventTypes,
    failure_count: row.failureCount,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    disabled_at: isoOrNull(row.disabledAt),
    last_error: row.lastError,
    last_success_at: isoOrNull(row.lastSuccessAt),
    space_id: row.spaceId,
  };
}

/**
 * The caller's endpoint by public id. Malformed, absent (including already deleted) and
 * other organizations' ids are the same 404; an endpoint in a Space the key does not hold,
 * or an organization-wide one seen through a Space-scoped key, is 403.
 */
export async function loadEndpointForCaller(
  db: DbOrTx,
  principal: Principal,
  publicId: string,
  options: { forUpdate?: boolean } = {},
): Promise<WebhookEndpointRow> {
  const id = parsePublicId('webhookEndpoint', publicId);
  if (id === null) throw new ApiError('webhook_endpoint_not_found');
  const query = db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.orgId, principal.orgId)));
  const [row] = options.forUpdate === true ? await query.for('update') : await query;
  if (row === undefined) throw new ApiError('webhook_endpoint_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}
