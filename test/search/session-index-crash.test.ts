import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionIndex, type SessionIndex } from "../../src/search/session-index.ts";
import { loadSqlite, type SqliteOpen } from "../../src/search/sqlite.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";
import { append, message, writeSession } from "./helpers/sessions.ts";

const CHILD = join(import.meta.dirname, "helpers/index-child.ts");
const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

const open: SqliteOpen = await loadSqlite();

/**
 * Sessions with `entries` messages each; every 5th is a tool result spilled to an artifact, whose
 * read (mid-session, after earlier rows were inserted) is where a kill can land. Returns their paths.
 */
function corpus(root: string, sessions: number, entries: number): string[] {
  const paths: string[] = [];
  for (let s = 0; s < sessions; s++) {
    let body = "";
    for (let e = 0; e < entries; e++)
      body +=
        e % 5 === 4
          ? message("toolResult", `stored as artifact://${e}`, { id: `s${s}e${e}` })
          : message("user", `session${s} entry${e} common words here`, { id: `s${s}e${e}` });
    const id = `0000${s.toString().padStart(4, "0")}-0000-4000-8000-000000000000`;
    const path = writeSession(join(root, "sessions"), `-tmp-b${s % 3}`, id, "/w", body);
    const dir = path.slice(0, -".jsonl".length);
    mkdirSync(dir);
    for (let e = 4; e < entries; e += 5) writeFileSync(join(dir, `${e}.bash.log`), `artifact text ${s} ${e}`);
    paths.push(path);
  }
  return paths;
}

/** Runs the refreshing child (committing every `batchBytes`) until its `reads`-th read, then SIGKILLs it there. */
async function killMidRefresh(root: string, reads: number, batchBytes: number): Promise<void> {
  const child = spawnTs(CHILD, ["refresh", root, String(reads), String(batchBytes)]);
  const said = await new Promise<string>((resolve, reject) => {
    onLines(child, (l) => (l === "stopped" || l === "finished") && resolve(l));
    child.on("error", reject);
    child.on("exit", (code) => resolve(`exit ${code}`));
  });
  expect(said).toBe("stopped");
  const exited = new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

/** Every indexed row, ordered: (session id, entry id, role, line); the FTS5 index checked in step with them. */
function dump(file: string): string[] {
  const db = open(file);
  try {
    expect(db.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    db.exec("INSERT INTO entries_text(entries_text) VALUES ('integrity-check')"); // throws on an FTS5 index out of step
    const texts = Number(db.prepare("SELECT count(*) AS n FROM entries_text_docsize").get()!.n);
    expect(texts).toBe(Number(db.prepare("SELECT count(*) AS n FROM entries").get()!.n));
    return db
      .prepare(
        `SELECT s.session_id || ' ' || e.entry_id || ' ' || e.role || ' ' || e.line_offset || ' ' || e.line_len AS row FROM entries e
         JOIN sessions s ON s.sid = e.sid ORDER BY row`,
      )
      .all()
      .map((r) => String(r.row));
  } finally {
    db.close();
  }
}

/** The rows of an index built from nothing over the same tree. */
async function cleanDump(root: string): Promise<string[]> {
  const file = join(tempDir("ts-index-clean-"), "clean.sqlite");
  const clean = await openSessionIndex({ root, indexPath: file });
  await clean.refresh();
  await clean.close();
  return dump(file);
}

/** Committed sessions of an index: each with exactly the entries of the complete lines before its offset. */
function committedConsistently(file: string): number {
  const db = open(file);
  try {
    const rows = db.prepare("SELECT sid, path, offset FROM sessions WHERE session_id IS NOT NULL").all();
    for (const row of rows) {
      const lines = readFileSync(String(row.path)).subarray(0, Number(row.offset)).toString("utf8").split("\n").filter(Boolean);
      const n = Number(db.prepare("SELECT count(*) AS n FROM entries WHERE sid = ?").get(row.sid)!.n);
      expect(n).toBe(lines.length - 1); // every line but the header gives one row
    }
    return rows.length;
  } finally {
    db.close();
  }
}

describe("SessionIndex under SIGKILL and racing writers", () => {
  it("a SIGKILL during the first build leaves a consistent, partial index that a refresh completes", async () => {
    const root = tempDir("ts-index-");
    corpus(root, 40, 30);
    await killMidRefresh(root, 25, 3000); // a commit every session or two
    const file = join(root, "index", "sessions.sqlite");
    const committed = committedConsistently(file);
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(40);
    const index = await openSessionIndex({ root });
    opened.push(index);
    expect(await index.status()).toMatchObject({ fresh: false, sessionsIndexed: committed });
    await index.refresh();
    expect(dump(file)).toEqual(await cleanDump(root));
  });

  it("a SIGKILL during catch-up after appends leaves every session at a line it fully indexed", async () => {
    const root = tempDir("ts-index-");
    const paths = corpus(root, 20, 10);
    const first = await openSessionIndex({ root });
    await first.refresh();
    await first.close();
    for (const [i, path] of paths.entries())
      for (let e = 10; e < 40; e++) append(path, message("user", `late${i} entry${e}`, { id: `s${i}e${e}` }));
    // catch-up reads each grown file's header, then its new bytes: stop after a few sessions
    await killMidRefresh(root, 12, 1);
    const file = join(root, "index", "sessions.sqlite");
    expect(committedConsistently(file)).toBe(20);
    const grown = open(file);
    const caughtUp = Number(grown.prepare("SELECT count(*) AS n FROM sessions WHERE offset = size AND size > 0").get()!.n);
    grown.close();
    expect(caughtUp).toBeGreaterThan(0);
    const index = await openSessionIndex({ root });
    opened.push(index);
    await index.refresh();
    expect(dump(file)).toEqual(await cleanDump(root));
  });

  it("indexes every line of a session another process appends to while it refreshes, each once", async () => {
    const root = tempDir("ts-index-");
    const [path] = corpus(root, 1, 1);
    const index = await openSessionIndex({ root });
    opened.push(index);
    const child = spawnTs(CHILD, ["append", path!, "400"]);
    const done = new Promise<string>((resolve) => onLines(child, resolve));
    let finished = false;
    void done.then(() => (finished = true));
    let refreshes = 0;
    while (!finished) {
      await index.refresh();
      refreshes++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await done).toBe("done");
    await index.refresh();
    const hits = await index.search("racing", { limit: 1000 });
    expect(hits.map((h) => h.entryId).sort()).toEqual(Array.from({ length: 400 }, (_, i) => `r${i.toString().padStart(7, "0")}`));
    expect(refreshes).toBeGreaterThan(0);
    expect(dump(join(root, "index", "sessions.sqlite"))).toEqual(await cleanDump(root));
  });

  it("two processes refreshing one index at once index every line once", async () => {
    const root = tempDir("ts-index-");
    corpus(root, 30, 20);
    const run = () => {
      const child = spawnTs(CHILD, ["refresh", root, "0", "4000"]);
      return new Promise<string>((resolve) => {
        onLines(child, (l) => l === "finished" && resolve(l));
        child.on("exit", (code) => resolve(`exit ${code}`));
      });
    };
    expect(await Promise.all([run(), run()])).toEqual(["finished", "finished"]);
    const file = join(root, "index", "sessions.sqlite");
    expect(committedConsistently(file)).toBe(30);
    expect(dump(file)).toEqual(await cleanDump(root));
  });
});
