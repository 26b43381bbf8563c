import { and, desc, eq, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, Tx } from '../../../db/client';
import { webhookDeliveries, webhookEndpoints } from '../../../db/schema';
import type { Config } from '../../core/config';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { isDeliverableEventType } from '../events/catalogue';
import { toPublicId } from '../ids';
import type { Actor, Principal } from '../keys/principal';
import { olderThan, PageQuerySchema, type CursorCodec, type Page } from '../pagination/cursor';
import { resolveRequestedSpace } from '../spaces/resolve-space';
import { isOrganizationWide, listSpace } from '../spaces/space-access';
import { checkDestination, type DestinationRefusal } from '../../net/destination';
import {
  loadEndpointForCaller,
  toWebhookEndpointResource,
  type CreatedWebhookEndpoint,
  type WebhookEndpoint,
  type WebhookEndpointRow,
} from './endpoint-resource';
import { generateWebhookSecret } from './signature';

export interface EndpointDeps {
  db: Db;
  config: Pick<Config, 'webhooks'>;
}

const UrlSchema = z.string().trim().min(1).max(2048);
const DescriptionSchema = z.string().max(500);
const EventTypesSchema = z.array(z.string().max(200)).max(100);

export const CreateWebhookEndpointBodySchema = z.strictObject({
  url: UrlSchema,
  description: DescriptionSchema.optional(),
  /** Empty or omitted: every deliverable event type. */
  event_types: EventTypesSchema.optional(),
  /** Raw uuid; null or omitted: organization-wide. */
  space_id: z.string().max(100).nullable().optional(),
});
export type CreateWebhookEndpointBody = z.infer<typeof CreateWebhookEndpointBodySchema>;

export const UpdateWebhookEndpointInputSchema = z.strictObject({
  id: z.string().max(200),
  description: DescriptionSchema.optional(),
  // Not z.boolean(): trpc-to-openapi switches boolean schemas to coercion, which would read
  // the string "false" as true. A union of literals is left alone and stays strict.
  enabled: z.union([z.literal(true), z.literal(false)]).optional(),
  event_types: EventTypesSchema.optional(),
  url: UrlSchema.optional(),
});
export type UpdateWebhookEndpointInput = z.infer<typeof UpdateWebhookEndpointInputSchema>;

export const ListWebhookEndpointsQuerySchema = PageQuerySchema.extend({ space_id: z.uuid().optional() }).strict();
export type ListWebhookEndpointsQuery = z.infer<typeof ListWebhookEndpointsQuerySchema>;

const REFUSALS: Record<DestinationRefusal, string> = {
  invalid_url: 'The url is not a valid absolute URL.',
  unsupported_scheme: 'The url must use https or http.',
  credentials_in_url: 'The url must not contain a user name or password.',
  dns_failure: 'The url host name does not resolve.',
  blocked_address: 'The url resolves to a loopback, private, link-local or metadata address.',
};

/** Refuses destinations the worker would refuse anyway, so a customer hears it at once. */
async function checkUrl(deps: EndpointDeps, url: string): Promise<string> {
  const check = await checkDestination(url, { allowPrivate: deps.config.webhooks.allowPrivateDestinations });
  if (!check.ok) throw new ApiError('invalid_request', { param: 'url', message: REFUSALS[check.reason] });
  return url;
}

/** Catalogue types only, the audit-only operator.webhook.* family excluded; duplicates dropped. */
function checkEventTypes(eventTypes: readonly string[] | undefined): string[] {
  const unique = [...new Set(eventTypes ?? [])];
  if (!unique.every(isDeliverableEventType)) {
    throw new ApiError('unknown_event_type', { param: 'event_types' });
  }
  return unique;
}

/**
 * The Space of a new endpoint. Null is organization-wide, which only an organization-wide
 * key may create; otherwise the same rules as a device's Space: unknown or another
 * organization's Space is 400, a Space of the organization the key does not hold is 403.
 */
async function resolveEndpointSpace(db: Db, principal: Principal, requested: string | null | undefined): Promise<string | null> {
  if (requested === undefined || requested === null) {
    if (!isOrganizationWide(principal)) throw new ApiError('insufficient_scope');
    return null;
  }
  return resolveRequestedSpace(db, principal, requested);
}

/**
 * Only the origin goes into audit details: paths and query strings of webhook URLs often
 * carry tokens (chat-hook style URLs), and the audit trail is readable with a read scope.
 */
function auditedUrl(url: string): string {
  return new URL(url).origin;
}

/** POST /v1/webhook_endpoints: the record plus the secret, which no later response repeats. */
export async function createWebhookEndpoint(
  deps: EndpointDeps,
  principal: Principal,
  actor: Actor,
  body: CreateWebhookEndpointBody,
): Promise<CreatedWebhookEndpoint> {
  const eventTypes = checkEventTypes(body.event_types);
  const spaceId = await resolveEndpointSpace(deps.db, principal, body.space_id);
  const url = await checkUrl(deps, body.url);
  const secret = generateWebhookSecret();
  const row = await deps.db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(webhookEndpoints)
      .values({ orgId: principal.orgId, spaceId, url, description: body.description ?? null, eventTypes, secret })
      .returning();
    await recordAudit(tx, actor, {
      action: 'operator.webhook.created.v1',
      resourceType: 'webhook_endpoint',
      resourceId: toPublicId('webhookEndpoint', inserted!.id),
      spaceId,
      details: { url_origin: auditedUrl(url), event_types: eventTypes },
    });
    return inserted!;
  });
  return { ...toWebhookEndpointResource(row), secret };
}

/** GET /v1/webhook_endpoints: newest first; a Space-scoped key must name a Space it holds. */
export async function listWebhookEndpoints(
  db: Db,
  cursors: CursorCodec,
  principal: Principal,
  query: ListWebhookEndpointsQuery,
): Promise<Page<WebhookEndpoint>> {
  const spaceId = listSpace(principal, query.space_id);
  const list = `webhook_endpoints:${principal.orgId}:${spaceId ?? '*'}`;
  const position = query.cursor === undefined ? null : cursors.decode(list, query.cursor);
  const conditions: (SQL | undefined)[] = [
    eq(webhookEndpoints.orgId, principal.orgId),
    spaceId === null ? undefined : eq(webhookEndpoints.spaceId, spaceId),
    olderThan(webhookEndpoints.createdAt, webhookEndpoints.id, position),
  ];
  const rows = await db
    .select()
    .from(webhookEndpoints)
    .where(and(...conditions))
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id))
    .limit(query.limit + 1);
  return cursors.page(list, rows, query.limit, toWebhookEndpointResource);
}

export async function getWebhookEndpoint(db: Db, principal: Principal, publicId: string): Promise<WebhookEndpoint> {
  return toWebhookEndpointResource(await loadEndpointForCaller(db, principal, publicId));
}

/**
 * Deliveries still waiting for an endpoint that stops receiving are closed as failed, so
 * re-enabling it never replays what happened while it was off (docs/webhooks.md).
 */
export async function abandonPendingDeliveries(tx: Tx, endpointId: string, now: Date): Promise<void> {
  await tx
    .update(webhookDeliveries)
    .set({ status: 'failed', completedAt: now, leaseOwner: null, leaseExpiresAt: null })
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'pending')));
}

/**
 * PATCH /v1/webhook_endpoints/{id}. `enabled: true` clears the failure streak (count and
 * disabled_at) and is the only way out of auto-disable; `last_error` stays as the record
 * of the most recent failure. `enabled: false` disables by hand, dropping pending deliveries.
 */
export async function updateWebhookEndpoint(
  deps: EndpointDeps,
  principal: Principal,
  actor: Actor,
  input: UpdateWebhookEndpointInput,
): Promise<WebhookEndpoint> {
  const eventTypes = input.event_types === undefined ? undefined : checkEventTypes(input.event_types);
  // Found (404/403) before the URL is resolved, so a foreign id never costs a DNS lookup.
  await loadEndpointForCaller(deps.db, principal, input.id);
  const url = input.url === undefined ? undefined : await checkUrl(deps, input.url);
  const row = await deps.db.transaction(async (tx) => {
    const current = await loadEndpointForCaller(tx, principal, input.id, { forUpdate: true });
    const now = new Date();
    const changes: Partial<WebhookEndpointRow> = { updatedAt: now };
    if (url !== undefined) changes.url = url;
    if (input.description !== undefined) changes.description = input.description;
    if (eventTypes !== undefined) changes.eventTypes = eventTypes;
    if (input.enabled === true) Object.assign(changes, { enabled: true, failureCount: 0, disabledAt: null });
    if (input.enabled === false && current.enabled) {
      Object.assign(changes, { enabled: false, disabledAt: now });
      await abandonPendingDeliveries(tx, current.id, now);
    }
    const [updated] = await tx.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, current.id)).returning();
    await recordAudit(tx, actor, {
      action: 'operator.webhook.updated.v1',
      resourceType: 'webhook_endpoint',
      resourceId: toPublicId('webhookEndpoint', current.id),
      spaceId: current.spaceId,
      details: {
        changed: Object.keys(input).filter((field) => field !== 'id'),
        ...(url === undefined ? {} : { url_origin: auditedUrl(url) }),
        ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
        ...(eventTypes === undefined ? {} : { event_types: eventTypes }),
      },
    });
    return updated!;
  });
  return toWebhookEndpointResource(row);
}

/** DELETE /v1/webhook_endpoints/{id}: gone with its pending deliveries; a second delete is 404. */
export async function deleteWebhookEndpoint(db: Db, principal: Principal, actor: Actor, publicId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const current = await loadEndpointForCaller(tx, principal, publicId, { forUpdate: true });
    await tx.delete(webhookEndpoints).where(eq(webhookEndpoints.id, current.id));
    await recordAudit(tx, actor, {
      action: 'operator.webhook.deleted.v1',
      resourceType: 'webhook_endpoint',
      resourceId: toPublicId('webhookEndpoint', current.id),
      spaceId: current.spaceId,
      details: { url_origin: auditedUrl(current.url) },
    });
  });
}
