import type { ClientBase } from "pg";

/**
 * The raw read both PostgreSQL benches time: `select` (one `line` column) through a server-side
 * cursor, 1,000 rows per FETCH, in one transaction (its own, or the caller's open one). Returns the characters read.
 */
export async function readThroughCursor(
  client: ClientBase,
  select: string,
  params: unknown[] = [],
  ownTransaction = true,
): Promise<number> {
  let chars = 0;
  if (ownTransaction) await client.query("BEGIN");
  await client.query(`DECLARE c NO SCROLL CURSOR FOR ${select}`, params);
  for (;;) {
    const { rows } = await client.query<{ line: string }>("FETCH 1000 FROM c");
    if (rows.length === 0) break;
    for (const r of rows) chars += r.line.length;
  }
  if (ownTransaction) await client.query("COMMIT");
  return chars;
}
