import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../src/index.ts";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import { cli } from "../support/cli.ts";
import { prng, spawnTs } from "../support/child.ts";
import { expectWholeOrAbsent, TREE_ENTRIES, untilWriting, writeImportTree } from "../support/pg-import-tree.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/cli-child.ts");
const ROUNDS = Number(process.env.MIGRATE_PG_KILL_ROUNDS ?? 4);

describe.skipIf(!pgCluster())("migrate --to postgres:// under SIGKILL", () => {
  it(`a killed import leaves each session whole or absent; a re-run completes; a continued copy is kept (${ROUNDS} rounds)`, async () => {
    const root = tempDir("ts-pg-kill-");
    const sessions = await writeImportTree(root);
    const random = prng(Number(process.env.MIGRATE_PG_KILL_SEED ?? 2026));
    let killedInside = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const url = await freshDatabase();
      await (await PgStore.connect(url)).close(); // the schema is there: the child's write transactions are its imports
      const app = `ts-kill-${round}`;
      const child = spawnTs(CHILD, ["migrate", "--root", root, "--to", `${url}?application_name=${app}`, "--json"]);
      let done = false;
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
      void exited.then(() => (done = true));
      // kill it inside a write transaction, after a random number of looks at it
      await untilWriting(url, app, () => done, 1 + Math.floor(random() * 40));
      if (!done) {
        child.kill("SIGKILL");
        killedInside++;
      }
      await exited;
      const present = await expectWholeOrAbsent(url, sessions);
      // what listing shows (what continueRecent resumes) is never a session without its history
      const backend = PostgresBackend.of(url);
      try {
        for (const info of await SessionManager.listAll({ store: backend })) expect(info.messageCount).toBe(TREE_ENTRIES);
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
      expect(m.getEntries()).toHaveLength(TREE_ENTRIES);
      m.appendMessage({ role: "user", content: "continued in the database" });
      await m.close();
      const again = await cli(["migrate", "--root", root, "--to", url, "--json"]);
      expect(again.code).toBe(0);
      expect(
        again.records
          .filter((r) => r.type === "file")
          .map((r) => r.status)
          .sort(),
      ).toEqual(["continued", "unchanged", "unchanged"]);
    } finally {
      await backend.close();
    }
    console.log(`migrate --to kill: ${ROUNDS} rounds, ${killedInside} killed inside a write transaction, lost = 0`);
  }, 300_000);

  it("a migrate --to paused (SIGSTOP) inside its import holds another run only up to its idle bound; resumed, all is done", async () => {
    const root = tempDir("ts-pg-stop-");
    const sessions = await writeImportTree(root);
    const url = await freshDatabase();
    await (await PgStore.connect(url)).close();
    const app = "ts-stopped-import";
    const child = spawnTs(CHILD, ["migrate", "--root", root, "--to", `${url}?application_name=${app}`, "--json"]);
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    let done = false;
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    void exited.then(() => (done = true));
    const db = rawPool(url);
    let stoppedInside = false;
    for (let attempt = 0; attempt < 10 && !stoppedInside && !done; attempt++) {
      await untilWriting(url, app, () => done);
      child.kill("SIGSTOP");
      const { rows } = await db.query(
        "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND backend_xid IS NOT NULL AND state = 'idle in transaction'",
        [app],
      );
      stoppedInside = rows.length > 0;
      if (!stoppedInside) child.kill("SIGCONT");
    }
    expect(stoppedInside).toBe(true);
    try {
      // another run imports everything: the paused transaction is ended by the server once idle past its bound
      const other = await cli(["migrate", "--root", root, "--to", url, "--json"]);
      expect(other.code, other.stdout).toBe(0);
      expect(other.records.filter((r) => r.type === "file").map((r) => r.status)).toContain("imported");
      expect(await expectWholeOrAbsent(url, sessions)).toBe(sessions.size);
    } finally {
      child.kill("SIGCONT");
    }
    // resumed, the paused run finds its connection ended, retries, and finds every session stored
    expect(await exited).toBe(0);
    const statuses = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.type === "file")
      .map((r) => r.status);
    expect(statuses).toHaveLength(sessions.size);
    expect(statuses.every((s) => s === "imported" || s === "unchanged")).toBe(true);
    expect(await expectWholeOrAbsent(url, sessions)).toBe(sessions.size);
  }, 120_000);
});
