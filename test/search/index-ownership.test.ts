import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { openSessionIndex, type SessionIndex, type SessionIndexOptions } from "../../src/search/session-index.ts";
import { loadSqlite } from "../../src/search/sqlite.ts";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";
import { message, writeSession } from "./helpers/sessions.ts";

const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
  clearSessionInfoCache();
});

async function open(options: SessionIndexOptions) {
  const index = await openSessionIndex(options);
  opened.push(index);
  return index;
}

function store() {
  const root = tempDir("ts-index-own-");
  const sessions = join(root, "sessions");
  const path = writeSession(
    sessions,
    "-tmp-a",
    "aaaa1111-0000-4000-8000-000000000001",
    "/work/a",
    message("user", "first alpha", { id: "u1" }),
  );
  return { root, sessions, path };
}

/** Another application's SQLite database, with tables named like the index's own. */
async function foreignDatabase(path: string): Promise<void> {
  const db = (await loadSqlite())(path);
  db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('owner', 'someone else');");
  db.exec("CREATE TABLE sessions (id INTEGER PRIMARY KEY, who TEXT); INSERT INTO sessions (who) VALUES ('alice');");
  db.exec("CREATE TABLE entries (id INTEGER PRIMARY KEY, note TEXT); INSERT INTO entries (note) VALUES ('keep me');");
  db.exec("PRAGMA user_version = 4");
  db.close();
}

/** Every file at the path (with an SQLite WAL and shared-memory file, if any) as bytes. */
function snapshot(path: string): Record<string, Buffer | null> {
  const out: Record<string, Buffer | null> = {};
  for (const suffix of ["", "-wal", "-shm", "-journal"]) out[suffix] = existsSync(path + suffix) ? readFileSync(path + suffix) : null;
  return out;
}

describe("the index replaces only a file it can prove is its own", () => {
  it("refuses a note, the session file itself and lifecycle.jsonl (OUTPUT_EXISTS), leaving every byte", async () => {
    const { root, path } = store();
    const note = join(root, "notes.txt");
    writeFileSync(note, "my precious notes\n".repeat(300));
    const lifecycle = join(root, "lifecycle.jsonl");
    writeFileSync(lifecycle, `${JSON.stringify({ op: "rm", id: "x" })}\n`);
    for (const target of [note, path, lifecycle]) {
      const before = snapshot(target);
      await expectCode(
        open({ root, indexPath: target }).then((index) => index.refresh()),
        "OUTPUT_EXISTS",
      );
      expect(snapshot(target)).toEqual(before);
    }
  });

  it("refuses another application's SQLite database with meta/sessions/entries tables, and drops nothing", async () => {
    const { root } = store();
    const other = join(root, "app.db");
    await foreignDatabase(other);
    const before = snapshot(other);
    await expectCode(
      open({ root, indexPath: other }).then((index) => index.refresh()),
      "OUTPUT_EXISTS",
    );
    expect(snapshot(other)).toEqual(before);
    const db = (await loadSqlite())(other);
    expect(db.prepare("SELECT note FROM entries").all()).toEqual([{ note: "keep me" }]);
    db.close();
  });

  it("a listing with listIndex: 'create' at a foreign file lists from the files and leaves it as it was", async () => {
    const { root } = store();
    const note = join(root, "notes.txt");
    writeFileSync(note, "my precious notes\n".repeat(300));
    const other = join(root, "app.db");
    await foreignDatabase(other);
    const without = await SessionManager.listAll({ root, listIndex: "off" });
    for (const target of [note, other]) {
      const before = snapshot(target);
      const warnings: StoreWarning[] = [];
      const list = await SessionManager.listAll({ root, listIndex: "create", indexPath: target, onWarning: (w) => warnings.push(w) });
      expect(list).toEqual(without);
      expect(snapshot(target)).toEqual(before);
      expect(warnings.map((w) => w.code)).toContain("INDEX_UNAVAILABLE");
    }
  });

  it("`search --index <note>` and `index --index <db>` exit with OUTPUT_EXISTS and change nothing", async () => {
    const { root } = store();
    const note = join(root, "notes.txt");
    writeFileSync(note, "my precious notes\n".repeat(300));
    const other = join(root, "app.db");
    await foreignDatabase(other);
    for (const [argv, target] of [
      [["search", "alpha", "--index", note], note],
      [["index", "--index", other], other],
      [["index", "--rebuild", "--index", other], other],
    ] as const) {
      const before = snapshot(target);
      const out = await cli(["--root", root, ...argv]);
      expect(out.code).not.toBe(0);
      expect(out.stderr).toContain("OUTPUT_EXISTS");
      expect(snapshot(target)).toEqual(before);
    }
  });

  it("an index of ours damaged past its first pages is still rebuilt; one made by an older version is kept", async () => {
    const { root } = store();
    const index = await open({ root });
    await index.refresh();
    await index.close();
    const file = join(root, "index", "sessions.sqlite");
    const db = (await loadSqlite())(file);
    expect(db.prepare("PRAGMA application_id").get()?.application_id).not.toBe(0);
    // an index of an older version carries no application id: its own tables prove it
    db.exec("PRAGMA application_id = 0");
    db.close();
    const again = await open({ root });
    expect((await again.search("alpha")).map((h) => h.entryId)).toEqual(["u1"]);
  });
});

describe("the index's file modes", () => {
  it("creates the index directory 0700 and the database, its WAL and shared-memory files 0600, whatever the umask", async () => {
    const { root } = store();
    const previous = process.umask(0o022);
    try {
      const index = await open({ root });
      await index.refresh();
      const dir = join(root, "index");
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      for (const suffix of ["", "-wal", "-shm"]) {
        const file = join(dir, `sessions.sqlite${suffix}`);
        if (existsSync(file)) expect([suffix, statSync(file).mode & 0o777]).toEqual([suffix, 0o600]);
      }
      expect(existsSync(join(dir, "sessions.sqlite-wal"))).toBe(true);
    } finally {
      process.umask(previous);
    }
  });

  it("brings an index of ours made 0644 by an older version back to 0600 when it opens it", async () => {
    const { root } = store();
    const dir = join(root, "index");
    const first = await open({ root });
    await first.refresh();
    await first.close();
    const file = join(dir, "sessions.sqlite");
    const { chmodSync } = await import("node:fs");
    chmodSync(file, 0o644);
    const second = await open({ root });
    await second.refresh();
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe("search queries", () => {
  it("a NUL in a query is INVALID_QUERY, as on PostgreSQL", async () => {
    const { root } = store();
    const index = await open({ root });
    await expectCode(index.search("alp\u0000ha"), "INVALID_QUERY");
    const out = await cli(["--root", root, "search", "a\u0000b"]);
    expect(out.stderr).toContain("INVALID_QUERY");
  });

  it("a NUL in a cwd, model or session filter is INVALID_OPTION, as on PostgreSQL", async () => {
    const { root } = store();
    const index = await open({ root });
    for (const filter of [{ cwd: "/work/a\u0000x" }, { model: "m\u0000x" }, { session: "aaaa\u0000" }])
      await expectCode(index.search("alpha", filter), "INVALID_OPTION");
  });
});
