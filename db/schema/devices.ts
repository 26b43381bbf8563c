import { sql } from 'drizzle-orm';
import { bigserial, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

export const deviceStatuses = ['creating', 'active', 'sleeping', 'waking', 'terminated', 'error'] as const;
export type DeviceStatus = (typeof deviceStatuses)[number];

export const devices = pgTable(
  'devices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    spaceId: uuid('space_id').notNull(),
    name: text('name').notNull(),
    region: text('region').notNull(),
    status: text('status', { enum: deviceStatuses }).notNull(),
    idleSuspendSecs: integer('idle_suspend_secs').notNull(),
    /** The single task slot: the live task holding the device, or null. */
    currentTaskId: uuid('current_task_id'),
    /** The CDP connection holding the task slot instead of a task, or null (cdp_sessions). */
    cdpSessionId: uuid('cdp_session_id'),
    /** Server instance whose browser pool runs this device's browser. */
    hostId: text('host_id'),
    /**
     * The running browser's incarnation (BrowserHandle.incarnation): the same across a
     * service restart that re-attached to it, new with every launch. A parked task whose
     * incarnation differs lost the page it built.
     */
    browserIncarnation: text('browser_incarnation'),
    /**
     * Where another host can join the running browser (BrowserHandle.location), for a
     * provider whose browsers outlive their host (browserless); null for a local browser.
     */
    browserLocation: text('browser_location'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    lastActiveAt: timestampMs('last_active_at').notNull().defaultNow(),
    statusChangedAt: timestampMs('status_changed_at').notNull().defaultNow(),
  },
  (table) => [
    index('devices_page_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
    index('devices_live_idx')
      .on(table.orgId)
      .where(sql`${table.status} <> 'terminated'`),
  ],
);

/**
 * Metering: one row per stretch of time a device is active. An open row (ended_at null)
 * is closed when the device leaves `active`; `heartbeat_at` bounds an open row after a
 * crash so a restart neither double counts nor invents time.
 */
export const deviceActivePeriods = pgTable(
  'device_active_periods',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deviceId: uuid('device_id').notNull(),
    orgId: uuid('org_id').notNull(),
    startedAt: timestampMs('started_at').notNull().defaultNow(),
    heartbeatAt: timestampMs('heartbeat_at').notNull().defaultNow(),
    endedAt: timestampMs('ended_at'),
  },
  (table) => [
    index('device_active_periods_org_idx').on(table.orgId, table.endedAt),
    index('device_active_periods_open_idx')
      .on(table.deviceId)
      .where(sql`${table.endedAt} is null`),
  ],
);
