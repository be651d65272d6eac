import { appendFileSync, copyFileSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { openSessionIndex } from "../../src/search/session-index.ts";
import { loadSqlite } from "../../src/search/sqlite.ts";
import { io } from "../../src/io.ts";
import { storeSpace, storeUsage } from "../../src/maintenance/store-accounting.ts";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { sharedData } from "../support/shared-data.ts";
import { tempDir } from "../support/temp-dir.ts";
import { message } from "./helpers/sessions.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "sessions");
const REAL = sharedData("real-sessions");
const OLD = new Date(Date.now() - 3_600_000);

afterEach(() => {
  vi.restoreAllMocks();
  clearSessionInfoCache();
});

/** A store of every fixture (but the headerless one) and the real pi sessions when present, all an hour old. */
function store(): { root: string; sessions: string; files: string[] } {
  const root = tempDir("ts-du-index-");
  const sessions = join(root, "sessions");
  const files: string[] = [];
  const place = (source: string, bucket: string) => {
    mkdirSync(join(sessions, bucket), { recursive: true });
    const target = join(sessions, bucket, basename(source));
    copyFileSync(source, target);
    utimesSync(target, OLD, OLD);
    files.push(target);
  };
  for (const name of readdirSync(FIXTURES)) if (name.endsWith(".jsonl") && !name.startsWith("garbage")) place(join(FIXTURES, name), "-f");
  if (REAL !== null) for (const name of readdirSync(REAL)) if (name.endsWith(".jsonl")) place(join(REAL, name), "-real");
  return { root, sessions, files };
}

/** Session files opened (for reading their lines) while `fn` runs. */
async function opened<T>(sessions: string, fn: () => Promise<T>): Promise<{ result: T; files: string[] }> {
  const files: string[] = [];
  const real = io.openSync;
  vi.spyOn(io, "openSync").mockImplementation(((path: string, ...rest: unknown[]) => {
    if (String(path).startsWith(sessions) && String(path).endsWith(".jsonl")) files.push(String(path));
    return (real as (...a: unknown[]) => number)(path, ...rest);
  }) as typeof io.openSync);
  try {
    return { result: await fn(), files };
  } finally {
    vi.restoreAllMocks();
  }
}

async function du(root: string, listIndex?: "off") {
  clearSessionInfoCache();
  const warnings: StoreWarning[] = [];
  const space = await storeSpace({ root, listIndex, onWarning: (w) => warnings.push(w) });
  const usage = await storeUsage({ root, listIndex, by: "session" });
  return { space, usage, warnings: warnings.map((w) => w.code) };
}

describe("du from the index", () => {
  it("gives the same numbers from cached accounting, reading no session file; a changed file is accounted again", async () => {
    const { root, sessions, files } = store();
    const index = await openSessionIndex({ root });
    await index.refresh();
    await index.close();
    const without = await du(root, "off");
    expect(without.space.rows.length).toBe(files.length);
    const filling = await du(root); // accounts every file once, keeping each
    expect(filling).toEqual(without);
    const warm = await opened(sessions, () => du(root));
    expect(warm.result).toEqual(without);
    expect(warm.files).toEqual([]);

    const grown = files[0]!;
    appendFileSync(grown, message("user", "x".repeat(5000), { timestamp: "2026-03-01T00:00:00.000Z" }));
    utimesSync(grown, new Date(OLD.getTime() + 1000), new Date(OLD.getTime() + 1000));
    const after = await opened(sessions, () => du(root));
    expect(after.result).toEqual(await du(root, "off"));
    expect(new Set(after.files)).toEqual(new Set([grown]));
    const row = after.result.space.rows.find((r) => r.path === grown) as { kinds: { text: number } } | undefined;
    const before = without.space.rows.find((r) => r.path === grown) as { kinds: { text: number } } | undefined;
    expect(row!.kinds.text).toBeGreaterThanOrEqual(before!.kinds.text + 5000);
  });

  it("a damaged accounting table is said (INDEX_UNAVAILABLE) and du reads the files, same numbers", async () => {
    const { root } = store();
    const index = await openSessionIndex({ root });
    await index.refresh();
    await index.close();
    const without = await du(root, "off");
    const open = await loadSqlite();
    const db = open(join(root, "index", "sessions.sqlite"));
    db.exec("DROP TABLE session_accounting; CREATE TABLE session_accounting (junk TEXT)");
    db.close();
    const damaged = await du(root);
    expect(damaged.space).toEqual(without.space);
    expect(damaged.usage).toEqual(without.usage);
    expect(damaged.warnings).toEqual(["INDEX_UNAVAILABLE"]);
  });

  it("does not keep a file changed while it was read, nor one changed in the last seconds", async () => {
    const { root, sessions, files } = store();
    const index = await openSessionIndex({ root });
    await index.refresh();
    await index.close();
    const fresh = join(sessions, "-f", "fresh.jsonl");
    writeFileSync(fresh, `${JSON.stringify({ type: "session", version: 3, id: "fresh", timestamp: "2026-01-01T00:00:00Z", cwd: "/f" })}\n`);
    // Another file grows while du reads it (an append lands between its open and its reads).
    const racing = files[1]!;
    const real = io.openSync;
    vi.spyOn(io, "openSync").mockImplementation(((path: string, flags: unknown, ...rest: unknown[]) => {
      const fd = (real as (...a: unknown[]) => number)(path, flags, ...rest);
      if (path === racing && typeof flags === "number") {
        appendFileSync(racing, message("user", "late"));
        utimesSync(racing, OLD, new Date(OLD.getTime() + 2000));
      }
      return fd;
    }) as typeof io.openSync);
    await du(root);
    vi.restoreAllMocks();
    const open = await loadSqlite();
    const db = open(join(root, "index", "sessions.sqlite"));
    try {
      const paths = db
        .prepare("SELECT path FROM session_accounting")
        .all()
        .map((r) => r.path);
      expect(paths).not.toContain(fresh);
      expect(paths).not.toContain(racing);
      expect(paths.length).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
