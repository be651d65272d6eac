import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import { spawnTs } from "../../support/child.ts";
import { rawPool } from "../../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";

const CHILD = join(import.meta.dirname, "helpers/pg-fork-child.ts");
const GATE = 4242;

/** SIGKILLs `child` once a statement of its connections (named `app`) waits on the gate (an advisory lock the test holds). */
async function killWhenGated(db: pg.Pool, child: ChildProcess, app: string): Promise<void> {
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  for (;;) {
    const { rows } = await db.query(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
      [app],
    );
    if (rows.length > 0) break;
  }
  child.kill("SIGKILL");
  await exited;
}

describe.skipIf(!pgCluster())("PostgreSQL branch fork is all or nothing", () => {
  it("a process killed while a branch fork writes its rows leaves no fork (no empty session to resume), stored source or not", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    try {
      const m = await SessionManager.create("/source", { store: backend });
      const ids = [1, 2, 3].map((i) => m.appendMessage({ role: "user", content: `message ${i}` }));
      await m.close();
      // from here on, a row written into `entries` waits for the gate this test holds
      const db = rawPool(url);
      await db.query(`CREATE FUNCTION ts_gate() RETURNS trigger LANGUAGE plpgsql AS
                        $$ BEGIN PERFORM pg_advisory_xact_lock_shared(${GATE}); RETURN NEW; END $$`);
      await db.query("CREATE TRIGGER ts_gate BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION ts_gate()");
      const gate = await db.connect();
      await gate.query(`SELECT pg_advisory_lock(${GATE})`);
      // the child is inside the write of the fork's rows when it waits on the gate: killed there
      await killWhenGated(db, spawnTs(CHILD, [`${url}?application_name=fork-1`, m.sessionId, ids[1]!]), "fork-1");
      await killWhenGated(db, spawnTs(CHILD, [`${url}?application_name=fork-2`, "unstored"]), "fork-2");
      await gate.query(`SELECT pg_advisory_unlock(${GATE})`);
      gate.release();
      await db.query("DROP TRIGGER ts_gate ON entries");
      const sessions = await SessionManager.listAll({ store: backend });
      expect(sessions.map((s) => s.id)).toEqual([m.sessionId]);
      // and with nothing in the way a fork is whole
      const source = await SessionManager.open(m.sessionId, { store: backend, readOnly: true });
      const fork = await source.fork({ atEntryId: ids[1]!, cwd: "/forked" });
      await fork.close();
      await source.close();
      const reopened = await SessionManager.open(fork.sessionId, { store: backend, readOnly: true });
      expect(reopened.getEntries().map((e) => e.id)).toEqual(ids.slice(0, 2));
      await reopened.close();
    } finally {
      await backend.close();
    }
  }, 60_000);
});
