import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';
import { organizations } from './organizations';

export const spaces = pgTable(
  'spaces',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [index('spaces_org_idx').on(table.orgId)],
);
