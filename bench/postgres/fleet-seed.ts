// The fleet of `bench/postgres/fleet.ts`, generated server-side: a few template sessions written
// through PgStore (so every derived column is the library's own), then multiplied by
// `INSERT … SELECT … generate_series` into sessions, entries, blobs and blob_refs.
import { createHash } from "node:crypto";
import type pg from "pg";
import type { PgLine, PgStore } from "../../src/storage/postgres/db/index.ts";
import { blobRefsIn } from "../../src/blob/blob-ref.ts";
import { previewOfLine } from "../../src/storage/postgres/pg-lines.ts";
import { agentMessage, prng } from "../workload.ts";

/** Templates the fleet cycles through (session g copies template g % TEMPLATES). */
export const TEMPLATES = 4;
/** Sessions per cwd: session g lives in `/fleet/project-<g / 100>`, so a cwd's listing is the same size at every fleet size. */
export const PER_CWD = 100;
/** Every this many sessions one blob nobody references, touched two hours ago (gc's candidates). */
export const ORPHAN_EVERY = 100;
/** Ten characters in each template's first user message, replaced by `tok<g, 7 digits>` (same length: `body_bytes` holds). */
const TOKEN = "FLEETTOKEN";
/** Sessions per generating transaction. */
const STEP = 5000;

export const templateId = (t: number) => `fleet-template-${t}`;
/** Session g's id (a UUID made from g, as the server makes it). */
export const fleetId = (g: number) => {
  const h = createHash("md5").update(`fleet-session-${g}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
export const fleetCwd = (g: number) => `/fleet/project-${Math.floor(g / PER_CWD)}`;
/** The word only session g's first message holds. */
export const fleetToken = (g: number) => `tok${String(g).padStart(7, "0")}`;
/** Session g's header line, as the server writes it (JSON.stringify's form). */
export const fleetHeader = (g: number) =>
  JSON.stringify({
    type: "session",
    version: 3,
    id: fleetId(g),
    timestamp: new Date(Date.UTC(2026, 0, 1) + g * 60_000).toISOString(),
    cwd: fleetCwd(g),
  });

const templateBlob = (t: number) => Buffer.alloc(1024, `fleet template ${t} image `);
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** Template t's lines: a first user message holding TOKEN, a session name, agent turns of ~`entryBytes`, an image by blob ref. */
function templateLines(t: number, entries: number, entryBytes: number): PgLine[] {
  const random = prng(1000 + t);
  const hash = sha(templateBlob(t));
  const records: Record<string, unknown>[] = [];
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  records.push({ type: "message", message: { role: "user", content: [{ type: "text", text: `${TOKEN} fleet template ${t} task` }] } });
  records.push({ type: "session_info", name: `fleet session ${t}` });
  records.push({
    type: "message",
    message: { role: "user", content: [{ type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" }] },
  });
  for (let i = 1; records.length < entries; i++) records.push({ type: "message", message: agentMessage(random, i, entryBytes) });
  return records.map((r, i) => {
    const entryId = (i + 1).toString(16).padStart(8, "0");
    const line = JSON.stringify({ ...r, id: entryId, parentId: i === 0 ? null : i.toString(16).padStart(8, "0"), timestamp: at(i) });
    return { line, entryId, kind: r.type as string, firstMessage: previewOfLine(line), blobRefs: blobRefsIn(line) };
  });
}

/** Writes the templates (once per database) and the table naming them with their blob's hash. */
export async function writeTemplates(store: PgStore, raw: pg.Pool, entries: number, entryBytes: number): Promise<void> {
  await raw.query("CREATE TABLE bench_fleet_templates (tid int PRIMARY KEY, id text NOT NULL, hash text NOT NULL)");
  for (let t = 0; t < TEMPLATES; t++) {
    const header = JSON.stringify({
      type: "session",
      version: 3,
      id: templateId(t),
      timestamp: "2026-01-01T00:00:00.000Z",
      cwd: "/fleet/t",
    });
    const blob = templateBlob(t);
    await store.createSessionWithRows(header, [
      { lines: templateLines(t, entries, entryBytes), blobs: [{ sha256: sha(blob), bytes: blob }] },
    ]);
    await raw.query("INSERT INTO bench_fleet_templates VALUES ($1, $2, $3)", [t, templateId(t), sha(blob)]);
  }
}

/** Per generated session g: its id, cwd, time, token and blob, as one lateral row `k` (SQL). */
const PER_SESSION = `
  CROSS JOIN LATERAL (SELECT md5('fleet-session-' || g)::uuid::text AS id, '/fleet/project-' || (g / ${PER_CWD}) AS cwd,
                             timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' AS at,
                             'tok' || lpad(g::text, 7, '0') AS token,
                             decode(repeat(md5('fleet-blob-' || g), 32), 'hex') AS blob) k
  JOIN bench_fleet_templates t ON t.tid = g % ${TEMPLATES}`;

/** Grows the fleet from sessions 1..`from` to 1..`to` (server-side, STEP sessions per transaction), then ANALYZEs. */
export async function growFleet(raw: pg.Pool, from: number, to: number): Promise<void> {
  for (let lo = from + 1; lo <= to; lo += STEP) {
    const hi = Math.min(to, lo + STEP - 1);
    const client = await raw.connect();
    try {
      await client.query("BEGIN");
      const range = [lo, hi];
      await client.query(
        `INSERT INTO blobs (sha256, bytes, size) SELECT encode(sha256(k.blob), 'hex'), k.blob, octet_length(k.blob)
           FROM generate_series($1::int, $2::int) g ${PER_SESSION}`,
        range,
      );
      await client.query(
        `INSERT INTO sessions (id, cwd, created, modified, header, first_message, first_message_seq, message_count, last_seq, body_bytes)
         SELECT k.id, k.cwd, k.at, k.at,
                '{"type":"session","version":3,"id":' || to_json(k.id) || ',"timestamp":"'
                  || to_char(k.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","cwd":' || to_json(k.cwd) || '}',
                replace(s.first_message, '${TOKEN}', k.token), s.first_message_seq, s.message_count, s.last_seq, s.body_bytes
           FROM generate_series($1::int, $2::int) g ${PER_SESSION} JOIN sessions s ON s.id = t.id`,
        range,
      );
      await client.query(
        `INSERT INTO entries (session_id, seq, entry_id, kind, line)
         SELECT k.id, e.seq, e.entry_id, e.kind, replace(replace(e.line, '${TOKEN}', k.token), t.hash, encode(sha256(k.blob), 'hex'))
           FROM generate_series($1::int, $2::int) g ${PER_SESSION} JOIN entries e ON e.session_id = t.id`,
        range,
      );
      await client.query(
        `INSERT INTO blob_refs (session_id, sha256)
         SELECT k.id, encode(sha256(k.blob), 'hex') FROM generate_series($1::int, $2::int) g ${PER_SESSION}`,
        range,
      );
      await client.query(
        `INSERT INTO blobs (sha256, bytes, size, touched)
         SELECT encode(sha256(b), 'hex'), b, octet_length(b), now() - interval '2 hours'
           FROM generate_series($1::int, $2::int) g, LATERAL (SELECT decode(repeat(md5('fleet-orphan-' || g), 32), 'hex') AS b) o
          WHERE g % ${ORPHAN_EVERY} = 0`,
        range,
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }
  // what autovacuum would have done by the time a fleet this size is queried
  await raw.query("VACUUM ANALYZE sessions, entries, blobs, blob_refs");
}
