import { defineConfig } from 'drizzle-kit';

// Used only by `npm run db:generate`; the server applies the committed migrations at start.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
});
