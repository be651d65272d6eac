import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll } from "vitest";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import type { PgBlobWrite, PgLine } from "../../src/storage/postgres/db/types.ts";
import { freshDatabase } from "./postgres.ts";
import { sha } from "./sha.ts";

const opened: Array<PgStore | pg.Pool> = [];

afterAll(async () => {
  for (const s of opened.splice(0).reverse()) await (s instanceof PgStore ? s.close() : s.end()).catch(() => {});
});

/** A PgStore on a fresh database (its URL too); closed after the file's tests. */
export async function freshStore(): Promise<{ store: PgStore; url: string }> {
  const url = await freshDatabase();
  const store = await PgStore.connect(url);
  track(store);
  return { store, url };
}

/** Closes `s` after the file's tests. */
export function track<T extends PgStore | pg.Pool>(s: T): T {
  opened.push(s);
  return s;
}

/** A plain pg pool on `url` for asserting rows directly; ended after the file's tests. */
export function rawPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {});
  return track(pool);
}

/** A v3 header line. */
export function headerLine(id: string = randomUUID(), cwd = "/home/demo/project", extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-11-22T10:00:00.000Z", cwd, ...extra });
}

/** Entry line number `n` (a user message), optionally referencing blobs. */
export function entryLine(n: number, refs: string[] = []): PgLine {
  const entryId = n.toString(16).padStart(8, "0");
  const content: unknown[] = [{ type: "text", text: `message ${n}` }, ...refs.map((r) => ({ type: "image", data: `blob:sha256:${r}` }))];
  const line = JSON.stringify({ type: "message", id: entryId, parentId: null, timestamp: "t", message: { role: "user", content } });
  return { line, entryId, kind: "message", firstMessage: `message ${n}`, blobRefs: refs };
}

/** Blob bytes with their hash. */
export function blob(text: string): PgBlobWrite {
  const bytes = Buffer.from(text);
  return { sha256: sha(bytes), bytes };
}

/** Every table the schema creates (each schema test checks the database holds exactly these). */
export const SCHEMA_TABLES = [
  "artifact_chunks",
  "artifacts",
  "blob_refs",
  "blobs",
  "entries",
  "redaction_key",
  "search_entries",
  "search_mark",
  "search_sessions",
  "session_deletions",
  "session_lifecycle",
  "sessions",
  "ts_schema_version",
  "usage_ledger",
];
