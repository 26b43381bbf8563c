import { z } from 'zod';
import { AuditEventSchema } from '../domain/audit/list-audit';
import { DeviceSchema, DeviceStatusSchema } from '../domain/devices/device-resource';
import { EscalationSchema } from '../domain/escalations/escalation-resource';
import { ResolveEscalationResultSchema } from '../domain/escalations/resolve-escalation';
import { WhoamiSchema } from '../domain/keys/whoami';
import { MintedSessionSchema, SessionSchema } from '../domain/sessions/session-resource';
import { TakeoverResultSchema, ReleaseResultSchema } from '../domain/sessions/session-operations';
import { TaskCacheSchema } from '../domain/task-caches/task-cache-resource';
import { TaskSchema, TaskStatusSchema } from '../domain/tasks/task-resource';
import { TaskStepSchema } from '../domain/tasks/task-steps';
import { UsageRowSchema, UsageSchema } from '../domain/usage/usage';
import { CreatedWebhookEndpointSchema, WebhookEndpointSchema } from '../domain/webhooks/endpoint-resource';
import { CredentialSchema } from '../domain/credentials/credential-resource';
import { PushedCodeSchema } from '../domain/credentials/credential-codes';
import { EventTypeListSchema, EventTypeSchema } from '../domain/webhooks/event-types';

/**
 * The OpenAPI document's named component schemas. Names are given here, beside the
 * document, rather than in the domain files: registering a zod schema in zod's global
 * registry with an `id` is what zod-openapi (under trpc-to-openapi) turns into
 * `#/components/schemas/<id>`, and doing it here keeps the domain free of document
 * concerns. Request bodies and list pages are named from the router in openapi.ts.
 */
export const namedResourceSchemas: Record<string, z.ZodType> = {
  Device: DeviceSchema,
  DeviceStatus: DeviceStatusSchema,
  Task: TaskSchema,
  TaskStatus: TaskStatusSchema,
  TaskCache: TaskCacheSchema,
  Session: SessionSchema,
  SessionWithToken: MintedSessionSchema,
  TakeoverResult: TakeoverResultSchema,
  ReleaseResult: ReleaseResultSchema,
  Escalation: EscalationSchema,
  EscalationResolution: ResolveEscalationResultSchema,
  WebhookEndpoint: WebhookEndpointSchema,
  WebhookEndpointWithSecret: CreatedWebhookEndpointSchema,
  Credential: CredentialSchema,
  CredentialCode: PushedCodeSchema,
  EventType: EventTypeSchema,
  EventTypeList: EventTypeListSchema,
  AuditEvent: AuditEventSchema,
  UsageRow: UsageRowSchema,
  Usage: UsageSchema,
  Whoami: WhoamiSchema,
};

/** Resources the document names but no procedure returns: the event stream's step. */
export const streamedSchemas: Record<string, z.ZodType> = {
  Step: TaskStepSchema,
};

/** Gives a schema its component name unless it already has one (idempotent). */
export function nameSchema(name: string, schema: z.ZodType): void {
  const existing = z.globalRegistry.get(schema);
  if (existing?.id !== undefined) return;
  z.globalRegistry.add(schema, { ...existing, id: name });
}
