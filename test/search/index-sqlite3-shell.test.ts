import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cliProcess } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

/** The `sqlite3` shell's version as [major, minor], or null when it is not installed (a loud skip; a failure under CI=true). */
function sqliteShell(): [number, number] | null {
  const run = spawnSync("sqlite3", ["--version"], { encoding: "utf8" });
  if (run.status === 0) {
    const [major, minor] = run.stdout.split(" ")[0]!.split(".").map(Number);
    return [major!, minor!];
  }
  if (process.env.CI === "true" || process.env.CI === "1") throw new Error("CI=true but the sqlite3 shell is missing");
  console.warn("SKIPPED: no sqlite3 shell; the index-browsing test did not run");
  return null;
}

const shell = sqliteShell();

describe.skipIf(shell === null)("the index file in the sqlite3 shell (issue 36 #14)", () => {
  it("opens: its plain tables with any shell, its full-text table from SQLite 3.43, as docs/index.md says", async () => {
    const root = tempDir();
    for (const words of ["alpha beta", "gamma delta"]) {
      const m = await SessionManager.create("/proj", { root });
      m.appendMessage({ role: "user", content: words, timestamp: 1 } as never);
      await m.close();
    }
    expect((await cliProcess(["index", "--root", root])).code).toBe(0);
    const file = join(root, "index", "sessions.sqlite");
    const sql = (query: string) => spawnSync("sqlite3", ["-readonly", file, query], { encoding: "utf8" });
    const plain = sql("SELECT count(*) FROM sessions; SELECT value FROM meta WHERE key = 'sessionsDir';");
    expect(plain.stderr).toBe("");
    expect(plain.stdout).toBe(`2\n${join(root, "sessions")}\n`);
    const fts = sql("SELECT count(*) FROM entries_text WHERE entries_text MATCH 'alpha';");
    const docs = readFileSync(join(import.meta.dirname, "../../docs/index.md"), "utf8");
    expect(docs).toContain("sqlite3 -readonly");
    expect(docs).toContain("3.43");
    if (shell![0] > 3 || shell![1] >= 43) expect(fts.stdout).toBe("1\n");
    else expect(fts.stderr).toContain('unrecognized option: "contentless_delete"');
  });
});
