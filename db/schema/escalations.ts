import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

// CONTRACT.md's value sets for the Escalation resource. The typed kinds (question, choice,
// confirm, credentials, takeover) come first; captcha, login and blocked are the older
// free-text kinds, still opened by the model planner's ask_human and answered like a question.
export const escalationKinds = ['question', 'choice', 'confirm', 'credentials', 'takeover', 'captcha', 'login', 'blocked'] as const;
/** What happens when an escalation expires unanswered: the task fails, or goes on without an answer. */
export const escalationTimeoutOutcomes = ['fail', 'continue'] as const;
export type EscalationTimeoutOutcome = (typeof escalationTimeoutOutcomes)[number];
export const escalationStatuses = ['pending', 'resolved', 'expired', 'canceled'] as const;
export const escalationSubjectKinds = ['task', 'device'] as const;
export const escalationUrgencies = ['low', 'normal', 'high'] as const;
export type EscalationKind = (typeof escalationKinds)[number];
export type EscalationStatus = (typeof escalationStatuses)[number];

/**
 * Where the POST to the organization's escalation URL stands: `none` when the
 * organization has no URL (the escalation is still listed for the console and the API).
 */
export const escalationDeliveryStatuses = ['none', 'pending', 'succeeded', 'failed'] as const;

/** A request for human help, opened when a task parks at `needs_human`. */
export const escalations = pgTable(
  'escalations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    spaceId: uuid('space_id').notNull(),
    taskId: uuid('task_id').notNull(),
    deviceId: uuid('device_id').notNull(),
    /** 1 for the first escalation of its task, 2 for the next time it parks, ... */
    attempt: integer('attempt').notNull(),
    kind: text('kind', { enum: escalationKinds }).notNull(),
    subjectKind: text('subject_kind', { enum: escalationSubjectKinds }).notNull(),
    urgency: text('urgency', { enum: escalationUrgencies }).notNull(),
    /** What the agent needs: the question it asked, or what blocked it. */
    reason: text('reason').notNull(),
    status: text('status', { enum: escalationStatuses }).notNull(),
    /** `choice`: the options offered; null for the other kinds. */
    options: text('options').array(),
    /** `choice`: whether several options may be picked. */
    multiple: boolean('multiple'),
    /** `credentials`: the names of the fields the human fills, all secret. */
    fields: text('fields').array(),
    onTimeout: text('on_timeout', { enum: escalationTimeoutOutcomes }).notNull().default('fail'),
    /**
     * The answer as JSON (a string for the free-text kinds, a boolean, an array of options).
     * Never a credentials answer: that one is only in `sealed_answer`.
     */
    answer: jsonb('answer'),
    /**
     * A credentials answer, encrypted (credential-seal.ts), from the resolve until the task's
     * runner takes it into memory (or the task ends): then set back to null.
     */
    sealedAnswer: text('sealed_answer'),
    cleared: boolean('cleared'),
    resolvedBy: text('resolved_by'),
    resolvedAt: timestampMs('resolved_at'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    expiresAt: timestampMs('expires_at').notNull(),
    /**
     * SHA-256 (hex) of every resolve bearer ever sent for this escalation: each delivery
     * attempt mints a fresh one, so no bearer is ever stored in a form that could be sent.
     */
    tokenHashes: text('token_hashes').array().notNull(),
    deliveryStatus: text('delivery_status', { enum: escalationDeliveryStatuses }).notNull(),
    deliveryAttempts: integer('delivery_attempts').notNull().default(0),
    nextDeliveryAt: timestampMs('next_delivery_at'),
    deliveryLeaseOwner: text('delivery_lease_owner'),
    deliveryLastError: text('delivery_last_error'),
    /**
     * SHA-256 (hex) of every answer_url secret sent for this escalation (one per delivery
     * attempt, like the bearers); the secret itself only ever travels in the URL's fragment.
     */
    answerLinkHashes: text('answer_link_hashes').array().notNull().default(sql`'{}'::text[]`),
    /** When one of its answer_url links was opened: every link of the escalation is used from then on. */
    answerLinkRedeemedAt: timestampMs('answer_link_redeemed_at'),
    /** SHA-256 (hex) of the access token the page that opened the link holds. */
    answerAccessHash: text('answer_access_hash'),
  },
  (table) => [
    index('escalations_page_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('escalations_task_idx').on(table.taskId),
    index('escalations_pending_expiry_idx')
      .on(table.expiresAt)
      .where(sql`${table.status} = 'pending'`),
    index('escalations_delivery_due_idx')
      .on(table.nextDeliveryAt)
      .where(sql`${table.deliveryStatus} = 'pending'`),
  ],
);
