import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { openSessionIndex } from "../../src/search/session-index.ts";
import { loadSqlite } from "../../src/search/sqlite.ts";
import { io } from "../../src/io.ts";
import type { DiscoveryOptions } from "../../src/session/discovery.ts";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { sharedData } from "../support/shared-data.ts";
import { tempDir } from "../support/temp-dir.ts";
import { header, message } from "./helpers/sessions.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "sessions");
const REAL = sharedData("real-sessions");
/** An hour ago: old enough to be cached (a file changed in the last seconds is not, see LISTING_RACY_MS). */
const OLD = new Date(Date.now() - 3_600_000);

afterEach(() => {
  vi.restoreAllMocks();
  clearSessionInfoCache();
});

function age(path: string, at: Date = OLD): void {
  utimesSync(path, at, at);
}

/** A store with every fixture (and the real pi sessions, when present) in a few buckets, all an hour old. */
function store(): { root: string; sessions: string; files: string[] } {
  const root = tempDir("ts-listing-");
  const sessions = join(root, "sessions");
  const files: string[] = [];
  const place = (source: string, bucket: string) => {
    mkdirSync(join(sessions, bucket), { recursive: true });
    const target = join(sessions, bucket, basename(source));
    copyFileSync(source, target);
    age(target);
    files.push(target);
  };
  for (const name of readdirSync(FIXTURES)) if (name.endsWith(".jsonl")) place(join(FIXTURES, name), "-fixtures");
  if (REAL !== null) for (const name of readdirSync(REAL)) if (name.endsWith(".jsonl")) place(join(REAL, name), "-real");
  mkdirSync(join(sessions, "-tmp-a"), { recursive: true });
  for (let i = 0; i < 3; i++) {
    const path = join(sessions, "-tmp-a", `2026-01-01T00-00-0${i}-000Z_a${i}.jsonl`);
    writeFileSync(path, header(`a${i}`, "/tmp/a", `2026-01-0${i + 1}T00:00:00.000Z`) + message("user", `hello ${i}`));
    age(path);
    files.push(path);
  }
  return { root, sessions, files };
}

/** A listing and the warnings it gave. */
async function listing(options: DiscoveryOptions & { root: string }, cwd: string | null = null) {
  const warnings: StoreWarning[] = [];
  clearSessionInfoCache();
  const list =
    cwd === null
      ? await SessionManager.listAll({ ...options, onWarning: (w) => warnings.push(w) })
      : await SessionManager.list(cwd, { ...options, onWarning: (w) => warnings.push(w) });
  return { list, warnings: warnings.map((w) => ({ code: w.code, path: w.path })) };
}

/**
 * Session files opened while `fn` runs (a listing from a fresh index opens none). garbage-header.jsonl
 * is left out: the warning that it is not listed opens it (unreadable and headerless are told apart).
 */
async function opened<T>(sessions: string, fn: () => Promise<T>): Promise<{ result: T; files: string[] }> {
  const files: string[] = [];
  const real = io.openSync;
  vi.spyOn(io, "openSync").mockImplementation(((path: string, ...rest: unknown[]) => {
    const name = String(path);
    if (name.startsWith(sessions) && name.endsWith(".jsonl") && !name.endsWith("garbage-header.jsonl")) files.push(name);
    return (real as (...a: unknown[]) => number)(path, ...rest);
  }) as typeof io.openSync);
  try {
    return { result: await fn(), files };
  } finally {
    vi.restoreAllMocks();
  }
}

async function buildIndex(root: string, sessionsDir?: string): Promise<void> {
  const index = await openSessionIndex({ root, ...(sessionsDir !== undefined ? { sessionsDir } : {}) });
  try {
    await index.refresh();
  } finally {
    await index.close();
  }
}

describe("listing from the index", () => {
  it("gives exactly the facts of a listing without it (fixtures and real sessions), reading no session file", async () => {
    const { root, sessions, files } = store();
    await buildIndex(root);
    const without = await listing({ root, listIndex: "off" });
    expect(without.list.length).toBe(files.length - 1); // garbage-header.jsonl is no session
    const { result: withIndex, files: read } = await opened(sessions, () => listing({ root }));
    expect(withIndex).toEqual(without);
    expect(read).toEqual([]);
    for (const cwd of ["/tmp/a", ...new Set(without.list.map((s) => s.cwd))]) {
      const a = await listing({ root, listIndex: "off" }, cwd);
      const b = await opened(sessions, () => listing({ root }, cwd));
      expect(b.result).toEqual(a);
      expect(b.files).toEqual([]);
    }
  });

  it("re-reads a session appended, rewritten, deleted or new, and never serves its old facts", async () => {
    const { root, sessions } = store();
    await buildIndex(root);
    const bucket = join(sessions, "-tmp-a");
    const [a0, a1, a2] = readdirSync(bucket)
      .sort()
      .map((n) => join(bucket, n));
    appendFileSync(a0!, message("assistant", "more", { timestamp: "2026-02-01T00:00:00.000Z" }));
    age(a0!, new Date(OLD.getTime() + 1000));
    // Rewritten by rename: same size, same mtime, another inode (and another first message).
    const bytes = readFileSync(a1!, "utf8").replace("hello 1", "HELLO 1");
    writeFileSync(`${a1}.tmp`, bytes);
    age(`${a1}.tmp`);
    renameSync(`${a1}.tmp`, a1!);
    rmSync(a2!);
    const added = join(bucket, "2026-01-01T00-00-09-000Z_a9.jsonl");
    writeFileSync(added, header("a9", "/tmp/a") + message("user", "new one"));
    age(added);
    const without = await listing({ root, listIndex: "off" });
    const { result, files } = await opened(sessions, () => listing({ root }));
    expect(result).toEqual(without);
    expect(files.sort()).toEqual([a0!, a1!, added].sort());
    const byId = new Map(result.list.map((s) => [s.id, s]));
    expect(byId.get("a0")!.messageCount).toBe(2);
    expect(byId.get("a1")!.firstMessage).toBe("HELLO 1");
    expect(byId.has("a2")).toBe(false);
    expect(byId.get("a9")!.firstMessage).toBe("new one");
    // continueRecent resumes the session appended last, as a listing without the index would.
    const recent = await SessionManager.continueRecent("/tmp/a", { root, readOnly: true });
    expect(recent.sessionId).toBe(without.list.find((s) => s.cwd === "/tmp/a")!.id);
    expect(recent.sessionId).toBe("a0");
    await recent.close();
    // Written back: the next listing reads nothing.
    const again = await opened(sessions, () => listing({ root }));
    expect(again.result).toEqual(without);
    expect(again.files).toEqual([]);
  });

  it("creates no index where there is none, unless asked (listIndex: create)", async () => {
    const { root, sessions } = store();
    const indexPath = join(root, "index", "sessions.sqlite");
    const without = await listing({ root, listIndex: "off" });
    expect(await listing({ root })).toEqual(without);
    expect(existsSync(join(root, "index"))).toBe(false);
    expect(await listing({ root, listIndex: "create" })).toEqual(without);
    expect(existsSync(indexPath)).toBe(true);
    const warm = await opened(sessions, () => listing({ root }));
    expect(warm.result).toEqual(without);
    expect(warm.files).toEqual([]);
  });

  it("does not cache a file changed in the last seconds (a same-size rewrite could keep its mtime)", async () => {
    const { root, sessions } = store();
    const fresh = join(sessions, "-tmp-a", "2026-01-01T00-00-05-000Z_now.jsonl");
    writeFileSync(fresh, header("now", "/tmp/a") + message("user", "just now"));
    await buildIndex(root);
    const open = await loadSqlite();
    const db = open(join(root, "index", "sessions.sqlite"));
    try {
      const paths = db
        .prepare("SELECT path FROM session_listing")
        .all()
        .map((r) => r.path);
      expect(paths).not.toContain(fresh);
      expect(paths).toContain(join(sessions, "-tmp-a", "2026-01-01T00-00-00-000Z_a0.jsonl"));
    } finally {
      db.close();
    }
    const { files } = await opened(sessions, () => listing({ root }));
    expect(files).toEqual([fresh]);
  });

  it("lists from the files, never failing, when the index is damaged or of another version", async () => {
    const { root } = store();
    await buildIndex(root);
    const indexPath = join(root, "index", "sessions.sqlite");
    const without = await listing({ root, listIndex: "off" });
    // Another schema version: listed from the files, the index left as it is (search rebuilds it).
    const open = await loadSqlite();
    const db = open(indexPath);
    db.exec("PRAGMA user_version = 2");
    db.close();
    const before = readFileSync(indexPath);
    expect(await listing({ root })).toEqual(without);
    expect(readFileSync(indexPath).equals(before)).toBe(true);
    // Damaged: the same listing, and a warning saying the index could not be read.
    for (const suffix of ["-wal", "-shm"]) rmSync(indexPath + suffix, { force: true });
    writeFileSync(indexPath, "this is no database ".repeat(400));
    const damaged = await listing({ root });
    expect(damaged.list).toEqual(without.list);
    expect(damaged.warnings).toEqual([{ code: "INDEX_UNAVAILABLE", path: indexPath }, ...without.warnings]);
  });

  it("lists while another connection holds the index's write lock: no wait past 200 ms, no warning, nothing written back", async () => {
    const { root, sessions } = store();
    await buildIndex(root);
    const grown = join(sessions, "-tmp-a", "2026-01-01T00-00-00-000Z_a0.jsonl");
    appendFileSync(grown, message("assistant", "more"));
    age(grown, new Date(OLD.getTime() + 1000));
    const open = await loadSqlite();
    const holder = open(join(root, "index", "sessions.sqlite"));
    holder.exec("BEGIN IMMEDIATE");
    try {
      const without = await listing({ root, listIndex: "off" });
      const busy = await opened(sessions, () => listing({ root }));
      expect(busy.result).toEqual(without);
      expect(busy.files).toEqual([grown]);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    const after = await opened(sessions, () => listing({ root }));
    expect(after.files).toEqual([grown]); // not written back while busy: read again, and kept now
    expect((await opened(sessions, () => listing({ root }))).files).toEqual([]);
  });

  it("an index of this version without the listing tables: listed from the files, no warning; index adds them", async () => {
    const { root, sessions } = store();
    await buildIndex(root);
    const indexPath = join(root, "index", "sessions.sqlite");
    const open = await loadSqlite();
    const db = open(indexPath);
    db.exec("DROP TABLE session_listing; DROP TABLE session_accounting");
    db.close();
    const without = await listing({ root, listIndex: "off" });
    expect(await listing({ root })).toEqual(without);
    await buildIndex(root);
    const warm = await opened(sessions, () => listing({ root }));
    expect(warm.result).toEqual(without);
    expect(warm.files).toEqual([]);
  });

  it("keeps the index of a tree read in place at the store's index location, writing nothing into the tree", async () => {
    const { root: tree, sessions } = store();
    const root = tempDir("ts-listing-store-");
    const before = readdirSync(sessions, { recursive: true }).sort();
    await buildIndex(root, sessions);
    const indexFiles = readdirSync(join(root, "index"));
    expect(indexFiles.some((n) => /^tree-[0-9a-f]{16}\.sqlite$/.test(n))).toBe(true);
    const without = await listing({ root, sessionsDir: sessions, listIndex: "off" });
    const warm = await opened(sessions, () => listing({ root, sessionsDir: sessions }));
    expect(warm.result).toEqual(without);
    expect(warm.files).toEqual([]);
    expect(readdirSync(sessions, { recursive: true }).sort()).toEqual(before);
    expect(existsSync(join(tree, "index"))).toBe(false);
  });

  it("refuses a listIndex it does not know (INVALID_OPTION)", async () => {
    const root = tempDir("ts-listing-opt-");
    await expect(SessionManager.listAll({ root, listIndex: "always" as never })).rejects.toMatchObject({ code: "INVALID_OPTION" });
  });
});
