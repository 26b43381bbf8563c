import { timestamp } from 'drizzle-orm/pg-core';

/** Every timestamp is timestamptz with millisecond precision, matching the RFC 3339 wire format. */
export const timestampMs = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });
