import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionIndex, type SessionIndex } from "../../src/search/session-index.ts";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";
import { message, writeSession } from "./helpers/sessions.ts";

/*
 * Outside review of issue 32 #1: SQLite keeps two more files beside a database, `<path>-wal` and
 * `<path>-shm` (and `<path>-journal`), and takes whatever it finds at those names as its own: a
 * WAL it cannot read is discarded, the shared-memory file rewritten, both deleted on close. The
 * index names neither: a file there that is not SQLite's is refused, every byte left.
 */

const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
  clearSessionInfoCache();
});

function store() {
  const root = tempDir("ts-index-sib-");
  const sessions = join(root, "sessions");
  writeSession(sessions, "-tmp-a", "aaaa1111-0000-4000-8000-000000000001", "/work/a", message("user", "first alpha", { id: "u1" }));
  return { root, sessions };
}

describe("the files beside the index path are SQLite's only when they are", () => {
  it.each(["-wal", "-shm", "-journal"])("a user's file at <index>%s is refused (OUTPUT_EXISTS), every byte kept", async (suffix) => {
    const { root } = store();
    const index = join(root, "notes.db");
    const note = `${index}${suffix}`;
    writeFileSync(note, "my precious notes\n".repeat(100));
    const out = await cli(["--root", root, "index", "--index", index, "--json"]);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain("OUTPUT_EXISTS");
    expect(readFileSync(note, "utf8")).toBe("my precious notes\n".repeat(100));
    expect(existsSync(index)).toBe(false);
  });

  it("an index's own WAL and shared-memory files are its own: a second open keeps working", async () => {
    const { root, sessions } = store();
    const indexPath = join(root, "i.sqlite");
    const first = await openSessionIndex({ sessionsDir: sessions, indexPath });
    opened.push(first);
    await first.refresh();
    const second = await openSessionIndex({ sessionsDir: sessions, indexPath });
    opened.push(second);
    expect((await second.search("alpha")).length).toBe(1);
  });
});
