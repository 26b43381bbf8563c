import type postgres from 'postgres';

/**
 * Where in the database a text occurs: every row of every table of the public schema as
 * PostgreSQL prints it (bytea as hex, jsonb as text), searched for each needle, which is
 * what a dump would show. Returns `table` entries of the needles found.
 */
export async function findInDatabase(sql: postgres.Sql, needles: readonly string[]): Promise<string[]> {
  const tables = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
  const found: string[] = [];
  for (const { name } of tables) {
    for (const needle of needles) {
      const [hit] = await sql`select 1 from ${sql(name)} t where strpos(t::text, ${needle}) > 0 limit 1`;
      if (hit !== undefined) found.push(`${name}: ${needle}`);
    }
  }
  return found;
}
