import { expect } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { rawPool } from "./pg-sessions.ts";
import { makePng } from "./png.ts";

/** Entries of each session `writeImportTree` makes. */
export const TREE_ENTRIES = 1200;

/**
 * A file store at `root` with three sessions (cwds /kill/a, /kill/b, /kill/c) of TREE_ENTRIES
 * entries each, an image every 40: an import long enough to be cut inside. Returns id → cwd.
 */
export async function writeImportTree(root: string): Promise<Map<string, string>> {
  const sessions = new Map<string, string>();
  for (const [s, cwd] of ["/kill/a", "/kill/b", "/kill/c"].entries()) {
    const m = await SessionManager.create(cwd, { root });
    for (let i = 0; i < TREE_ENTRIES; i++) {
      if (i % 40 === 39) {
        const data = makePng(48, 48, s * 100 + i).toString("base64");
        m.appendMessage({ role: "user", content: [{ type: "image", data, mimeType: "image/png" }] });
      } else {
        m.appendMessage({ role: i % 2 ? "assistant" : "user", content: `${cwd} message ${i} ${"x".repeat(400)}` });
      }
    }
    await m.close();
    sessions.set(m.sessionId, cwd);
  }
  return sessions;
}

/**
 * Every session row in the database at `url` is one of `sessions` holding all TREE_ENTRIES of its
 * entries as seqs 1…n (none is empty or cut short), and every blob it references is stored.
 * Returns how many there are.
 */
export async function expectWholeOrAbsent(url: string, sessions: Map<string, string>): Promise<number> {
  const db = rawPool(url);
  try {
    const { rows } = await db.query<{ id: string; cwd: string; last_seq: number; n: number; messages: number }>(
      `SELECT s.id, s.cwd, s.last_seq::int, s.message_count::int AS messages,
              (SELECT count(*)::int FROM entries e WHERE e.session_id = s.id) AS n
         FROM sessions s ORDER BY s.id`,
    );
    for (const row of rows) {
      expect(sessions.get(row.id), `unknown session ${row.id}`).toBe(row.cwd);
      expect(row, `session ${row.id}`).toMatchObject({ last_seq: TREE_ENTRIES, n: TREE_ENTRIES, messages: TREE_ENTRIES });
    }
    const { rows: dangling } = await db.query(
      "SELECT 1 FROM blob_refs r WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = r.sha256)",
    );
    expect(dangling).toEqual([]);
    return rows.length;
  } finally {
    await db.end();
  }
}

/**
 * Resolves once a connection named `app` was seen `sightings` times inside a transaction that wrote
 * something (an import under way), looking again and again; or once `done()`.
 */
export async function untilWriting(url: string, app: string, done: () => boolean, sightings = 1): Promise<void> {
  const db = rawPool(url);
  try {
    for (let seen = 0; seen < sightings && !done(); ) {
      const { rows } = await db.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND backend_xid IS NOT NULL", [app]);
      if (rows.length > 0) seen++;
    }
  } finally {
    await db.end();
  }
}
