import type { PoolClient } from "./pg-client.ts";
import type { PgLimits } from "./limits.ts";

/*
 * The one place blob bytes cross the connection (limits.ts says why): written as binary parameters,
 * a group of small blobs per statement or one large blob in parts assembled by the server; read
 * whole when small, by `substring` parts when large. Never a `bytea[]` (one hex string of them all),
 * never one string of a whole large blob.
 */

const asBuffer = (bytes: Uint8Array) => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/** Most blobs in one multi-row INSERT (3 parameters each, far below PostgreSQL's 65,535). */
const GROUP_BLOBS = 1000;

/**
 * Inserts each blob of `blobs` that is not stored yet (`ON CONFLICT DO NOTHING`), inside the
 * caller's transaction: small ones in groups of up to `blobPartBytes` per statement, a larger one
 * in parts (see `writeLargeBlob`).
 */
export async function writeBlobs(
  client: PoolClient,
  blobs: ReadonlyArray<{ hash: string; bytes: Uint8Array }>,
  limits: PgLimits,
): Promise<void> {
  let group: Array<{ hash: string; bytes: Uint8Array }> = [];
  let groupBytes = 0;
  const sendGroup = async () => {
    if (group.length === 0) return;
    const values = group.map((_, i) => `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3})`).join(", ");
    await client.query(
      `INSERT INTO blobs (sha256, bytes, size) VALUES ${values} ON CONFLICT (sha256) DO NOTHING`,
      group.flatMap((b) => [b.hash, asBuffer(b.bytes), b.bytes.byteLength]),
    );
    group = [];
    groupBytes = 0;
  };
  for (const blob of blobs) {
    if (blob.bytes.byteLength > limits.blobPartBytes) {
      await writeLargeBlob(client, blob.hash, blob.bytes, limits);
      continue;
    }
    if (groupBytes + blob.bytes.byteLength > limits.blobPartBytes || group.length === GROUP_BLOBS) await sendGroup();
    group.push(blob);
    groupBytes += blob.bytes.byteLength;
  }
  await sendGroup();
}

/**
 * Inserts one blob larger than a part, unless it is stored: its parts go into a temporary table
 * (dropped at commit, never WAL-logged), one statement each, and the server joins them into the
 * row in one INSERT. Must run inside a transaction.
 */
async function writeLargeBlob(client: PoolClient, hash: string, bytes: Uint8Array, limits: PgLimits): Promise<void> {
  const { rows } = await client.query("SELECT 1 FROM blobs WHERE sha256 = $1", [hash]);
  if (rows.length > 0) return;
  await client.query("CREATE TEMP TABLE IF NOT EXISTS ts_blob_parts (n int PRIMARY KEY, part bytea NOT NULL) ON COMMIT DROP");
  await client.query("DELETE FROM ts_blob_parts");
  const buffer = asBuffer(bytes);
  for (let n = 0, at = 0; at < buffer.byteLength; n++, at += limits.blobPartBytes) {
    await client.query("INSERT INTO ts_blob_parts (n, part) VALUES ($1, $2)", [n, buffer.subarray(at, at + limits.blobPartBytes)]);
  }
  await client.query(
    `INSERT INTO blobs (sha256, bytes, size)
     SELECT $1, string_agg(part, ''::bytea ORDER BY n), $2 FROM ts_blob_parts ON CONFLICT (sha256) DO NOTHING`,
    [hash, bytes.byteLength],
  );
  await client.query("DELETE FROM ts_blob_parts");
}

/**
 * The bytes of the stored blobs among `hashes` (absent ones are left out): small ones in one query,
 * each larger one in `substring` parts of `blobPartBytes`. Blobs are immutable, so parts read by
 * separate statements belong together; one deleted meanwhile is left out.
 */
export async function readBlobs(client: PoolClient, hashes: readonly string[], limits: PgLimits): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (hashes.length === 0) return out;
  const { rows } = await client.query<{ sha256: string; size: number; bytes: Buffer | null }>(
    `SELECT sha256, octet_length(bytes)::float8 AS size, CASE WHEN octet_length(bytes) <= $2 THEN bytes END AS bytes
       FROM blobs WHERE sha256 = ANY($1::text[])`,
    [hashes, limits.blobPartBytes],
  );
  for (const row of rows) {
    const bytes = row.bytes ?? (await readLargeBlob(client, row.sha256, row.size, limits));
    if (bytes !== null) out.set(row.sha256, bytes);
  }
  return out;
}

async function readLargeBlob(client: PoolClient, hash: string, size: number, limits: PgLimits): Promise<Buffer | null> {
  const whole = Buffer.allocUnsafe(size);
  for (let at = 0; at < size; at += limits.blobPartBytes) {
    const { rows } = await client.query<{ part: Buffer }>(
      "SELECT substring(bytes FROM $2::int FOR $3::int) AS part FROM blobs WHERE sha256 = $1",
      [hash, at + 1, limits.blobPartBytes],
    );
    if (rows[0] === undefined) return null;
    rows[0].part.copy(whole, at);
  }
  return whole;
}
