import type { Pool } from "./pg-client.ts";
import { withClient } from "./transaction.ts";

/**
 * The database's redaction key (table `redaction_key`, one row): `candidate` becomes it when there is
 * none yet (INSERT … ON CONFLICT DO NOTHING), so writers racing on an empty table all end with the one
 * key that won; every later call reads that row. The key is the HMAC key of the redaction markers.
 */
export async function ensureRedactionKey(pool: Pool, candidate: Uint8Array): Promise<Buffer> {
  return withClient(pool, "Reading the redaction key", async (client) => {
    await client.query("INSERT INTO redaction_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [Buffer.from(candidate)]);
    const { rows } = await client.query<{ key: Buffer }>("SELECT key FROM redaction_key WHERE id = 1");
    return rows[0]!.key;
  });
}

/** The database's redaction key, or null when it has none yet (never creates it: a read-only connection can read). */
export async function readRedactionKey(pool: Pool): Promise<Buffer | null> {
  return withClient(pool, "Reading the redaction key", async (client) => {
    const { rows } = await client.query<{ key: Buffer }>("SELECT key FROM redaction_key WHERE id = 1");
    return rows[0]?.key ?? null;
  });
}
