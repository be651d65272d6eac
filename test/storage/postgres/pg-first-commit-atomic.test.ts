import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import { onLines, spawnTs } from "../../support/child.ts";
import { rawPool } from "../../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";

const CHILD = join(import.meta.dirname, "helpers/pg-first-commit-child.ts");
const GATE = 4343;

/**
 * Runs the child (its connections named `app`) until a statement of it waits on the gate (an
 * advisory lock the test holds), SIGKILLs it there, and returns the id of the session it created.
 * The server notices a dead client only when it next talks to it: a statement granted its lock
 * later would still run (and a lone statement commit). So, the gate still held, the dead client's
 * backend is ended (what the server does once it notices) and gone before this returns.
 */
async function killWhenGated(db: pg.Pool, child: ChildProcess, app: string): Promise<string> {
  let id: string | null = null;
  onLines(child, (line) => {
    if (line.startsWith("session ")) id = line.slice("session ".length);
    if (line === "flushed") throw new Error("the child's first commit went through the gate");
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  let pid: number | undefined;
  while (pid === undefined) {
    const { rows } = await db.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
      [app],
    );
    pid = rows[0]?.pid;
  }
  child.kill("SIGKILL");
  await exited;
  // waits (up to a minute) for the backend to be gone: true once it is
  const { rows } = await db.query<{ ended: boolean }>("SELECT pg_terminate_backend($1, 60000) AS ended", [pid]);
  expect(rows[0]!.ended).toBe(true);
  expect(id).not.toBeNull();
  return id!;
}

/** The gate: from its creation on, a row written into `entries` waits while the test holds advisory lock GATE. */
async function gateEntries(db: pg.Pool): Promise<void> {
  await db.query(`CREATE FUNCTION ts_gate() RETURNS trigger LANGUAGE plpgsql AS
                    $$ BEGIN PERFORM pg_advisory_xact_lock_shared(${GATE}); RETURN NEW; END $$`);
  await db.query("CREATE TRIGGER ts_gate BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION ts_gate()");
}

describe.skipIf(!pgCluster())("PostgreSQL first commit of a deferred session is all or nothing", () => {
  it("a process killed inside a session's first commit leaves no session: nothing listed, continueRecent starts anew", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    const db = rawPool(url);
    try {
      await backend.connect(); // the schema is there
      await gateEntries(db);
      const gate = await db.connect();
      await gate.query(`SELECT pg_advisory_lock(${GATE})`);
      // the children are inside the write of their first rows when they wait on the gate: killed there
      const killed = [
        await killWhenGated(db, spawnTs(CHILD, [`${url}?application_name=first-1`, "/first/text"]), "first-1"),
        await killWhenGated(db, spawnTs(CHILD, [`${url}?application_name=first-2`, "/first/image", "image"]), "first-2"),
      ];
      await gate.query(`SELECT pg_advisory_unlock(${GATE})`);
      gate.release();
      await db.query("DROP TRIGGER ts_gate ON entries");
      // before the fix: both session rows were committed in their own transaction, empty, and listed
      const { rows } = await db.query("SELECT id FROM sessions WHERE id = ANY($1::text[])", [killed]);
      expect(rows).toEqual([]);
      expect(await SessionManager.listAll({ store: backend })).toEqual([]);
      for (const cwd of ["/first/text", "/first/image"]) {
        const resumed = await SessionManager.continueRecent(cwd, { store: backend });
        expect(killed).not.toContain(resumed.sessionId);
        expect(resumed.getEntries()).toEqual([]);
        await resumed.close();
      }
      // and with nothing in the way the first commit stores the row and its first entries together
      const done = spawnTs(CHILD, [url, "/first/whole", "image"]);
      let id = "";
      onLines(done, (line) => {
        if (line.startsWith("session ")) id = line.slice("session ".length);
      });
      expect(await new Promise((resolve) => done.on("exit", resolve))).toBe(0);
      const m = await SessionManager.continueRecent("/first/whole", { store: backend, readOnly: true });
      expect(m.sessionId).toBe(id);
      expect(m.getEntries().map((e) => (e.type === "message" ? (e.message as { role: string }).role : e.type))).toEqual([
        "user",
        "assistant",
      ]);
      await m.close();
    } finally {
      await db.end();
      await backend.close();
    }
  }, 60_000);

  it("a process paused (SIGSTOP) inside its first commit holds a blob it is storing only up to its lease's length", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    const db = rawPool(url);
    const app = "first-stopped";
    const child = spawnTs(CHILD, [`${url}?application_name=${app}`, "/first/stopped", "image", "2000"]);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    let id = "";
    onLines(child, (line) => {
      if (line.startsWith("session ")) id = line.slice("session ".length);
    });
    try {
      await backend.connect();
      await gateEntries(db);
      const gate = await db.connect();
      await gate.query(`SELECT pg_advisory_lock(${GATE})`);
      let pid: number | undefined;
      while (pid === undefined) {
        const { rows } = await db.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
          [app],
        );
        pid = rows[0]?.pid;
      }
      // paused with its blob row inserted and its entries waiting on the gate; opened, the insert
      // completes and the transaction sits idle, its process stopped
      child.kill("SIGSTOP");
      await gate.query(`SELECT pg_advisory_unlock(${GATE})`);
      gate.release();
      for (;;) {
        const { rows } = await db.query("SELECT state FROM pg_stat_activity WHERE pid = $1", [pid]);
        if (rows[0]?.state === "idle in transaction") break;
      }
      // another writer storing the same image waits on that blob row until the server ends the
      // paused transaction (before the fix: forever, the first commit had no idle bound)
      const m = await SessionManager.create("/first/other", { store: backend, deferUntilAssistant: true });
      m.appendMessage({
        role: "user",
        content: [{ type: "image", data: Buffer.alloc(4096, 7).toString("base64"), mimeType: "image/png" }],
        timestamp: 1,
      });
      m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], timestamp: 2 });
      await m.close();
      const { rows: ended } = await db.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
      expect(ended).toEqual([]);
      // resumed, the paused writer finds its connection ended, creates its session anew, whole
      child.kill("SIGCONT");
      expect(await exited).toBe(0);
      const reopened = await SessionManager.open(id, { store: backend, readOnly: true });
      expect(reopened.getEntries().map((e) => e.type)).toEqual(["message", "message"]);
      await reopened.close();
      expect((await SessionManager.listAll({ store: backend })).map((s) => s.messageCount)).toEqual([2, 2]);
    } finally {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
      await db.end();
      await backend.close();
    }
  }, 60_000);
});
