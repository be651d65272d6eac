import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../src/index.ts";
import { PgStore } from "../../src/postgres/index.ts";
import { cli } from "../support/cli.ts";
import { prng, spawnTs } from "../support/child.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { makePng } from "../support/png.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/cli-child.ts");
const ROUNDS = Number(process.env.MIGRATE_PG_KILL_ROUNDS ?? 4);

/** Three sessions of three cwds, 1,200 entries each (an image every 40): an import long enough to be killed inside. */
async function fileTree(root: string): Promise<Map<string, { cwd: string; entries: number }>> {
  const sessions = new Map<string, { cwd: string; entries: number }>();
  for (const [s, cwd] of ["/kill/a", "/kill/b", "/kill/c"].entries()) {
    const m = await SessionManager.create(cwd, { root });
    for (let i = 0; i < 1200; i++) {
      if (i % 40 === 39) {
        m.appendMessage({ role: "user", content: [{ type: "image", data: makePng(48, 48, s * 100 + i).toString("base64"), mimeType: "image/png" }] });
      } else {
        m.appendMessage({ role: i % 2 ? "assistant" : "user", content: `${cwd} message ${i} ${"x".repeat(400)}` });
      }
    }
    await m.close();
    sessions.set(m.sessionId, { cwd, entries: 1200 });
  }
  return sessions;
}

/** Every session row in the database holds all of its source's entries, as a contiguous run of seqs. */
async function expectWholeOrAbsent(url: string, sessions: Map<string, { entries: number }>): Promise<number> {
  const db = rawPool(url);
  const { rows } = await db.query<{ id: string; last_seq: number; n: number; messages: number }>(
    `SELECT s.id, s.last_seq::int, s.message_count::int AS messages, (SELECT count(*)::int FROM entries e WHERE e.session_id = s.id) AS n
       FROM sessions s ORDER BY s.id`,
  );
  for (const row of rows) {
    const source = sessions.get(row.id);
    expect(source, `unknown session ${row.id}`).toBeDefined();
    expect(row, `session ${row.id}`).toMatchObject({ last_seq: source!.entries, n: source!.entries, messages: source!.entries });
  }
  await db.end();
  return rows.length;
}

describe.skipIf(!pgCluster())("migrate --to postgres:// under SIGKILL", () => {
  it(`a killed import leaves each session whole or absent; a re-run completes; a continued copy is kept (${ROUNDS} rounds)`, async () => {
    const root = tempDir("ts-pg-kill-");
    const sessions = await fileTree(root);
    const random = prng(Number(process.env.MIGRATE_PG_KILL_SEED ?? 2026));
    let killedInside = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const url = await freshDatabase();
      await (await PgStore.connect(url)).close(); // the schema is there: the child's write transactions are its imports
      const app = `ts-kill-${round}`;
      const child = spawnTs(CHILD, ["migrate", "--root", root, "--to", `${url}?application_name=${app}`, "--json"]);
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_c, signal) => resolve(signal)));
      let done = false;
      void exited.then(() => (done = true));
      // kill it while one of its transactions has written something (backend_xid), after a random number of looks
      const looks = Math.floor(random() * 40);
      const db = rawPool(url);
      for (let seen = 0; !done && seen <= looks; ) {
        const { rows } = await db.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND backend_xid IS NOT NULL",
          [app],
        );
        if (rows.length > 0) seen++;
      }
      if (!done) {
        child.kill("SIGKILL");
        killedInside++;
      }
      await exited;
      const present = await expectWholeOrAbsent(url, sessions);
      // what listing shows (what continueRecent resumes) is never a session without its history
      const backend = PostgresBackend.of(url);
      try {
        for (const info of await SessionManager.listAll({ store: backend })) expect(info.messageCount).toBe(1200);
      } finally {
        await backend.close();
      }
      const rerun = await cli(["migrate", "--root", root, "--to", url, "--json"]);
      expect(rerun.code, rerun.stdout).toBe(0);
      const statuses = rerun.records.filter((r) => r.type === "file").map((r) => r.status);
      expect(statuses.filter((s) => s === "unchanged")).toHaveLength(present);
      expect(statuses.filter((s) => s === "imported")).toHaveLength(sessions.size - present);
      expect(await expectWholeOrAbsent(url, sessions)).toBe(sessions.size);
    }
    expect(killedInside).toBeGreaterThan(0);

    // a session continued in the database after its import stays so: re-runs report it, never IMPORT_CONFLICT
    const url = await freshDatabase();
    expect((await cli(["migrate", "--root", root, "--to", url])).code).toBe(0);
    const backend = PostgresBackend.of(url);
    try {
      const m = await SessionManager.continueRecent("/kill/b", { store: backend });
      expect(m.getEntries()).toHaveLength(1200);
      m.appendMessage({ role: "user", content: "continued in the database" });
      await m.close();
      const again = await cli(["migrate", "--root", root, "--to", url, "--json"]);
      expect(again.code).toBe(0);
      expect(again.records.filter((r) => r.type === "file").map((r) => r.status).sort()).toEqual(["continued", "unchanged", "unchanged"]);
    } finally {
      await backend.close();
    }
    console.log(`migrate --to kill: ${ROUNDS} rounds, ${killedInside} killed inside a write transaction, lost = 0`);
  }, 300_000);
});
