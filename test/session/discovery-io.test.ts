import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Io } from "../../src/io.ts";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

function sessionLines(id: string, cwd: string, text: string): string {
  const header = { type: "session", version: 3, id, timestamp: "2025-01-01T00:00:00.000Z", cwd };
  const message = { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "t", message: { role: "user", content: text } };
  return `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`;
}

/** Counts the calls of some io functions while `run` runs. */
async function countCalls(names: (keyof Io)[], run: () => Promise<unknown>): Promise<Record<string, number>> {
  const counts: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const restores = names.map((name) =>
    injectFault(name, () => {
      counts[name]!++;
      return undefined;
    }),
  );
  try {
    await run();
  } finally {
    for (const restore of restores) restore();
  }
  return counts;
}

afterEach(() => clearSessionInfoCache());

describe("listing I/O", () => {
  it("a first listing opens each file once, takes its stat from the descriptor and reads its head in one call", async () => {
    const root = tempDir();
    const dir = join(root, "sessions", cwdBucket("/p"));
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 20; i++)
      writeFileSync(join(dir, `2025-01-01T00-00-00-000Z_0000000${i}-x.jsonl`), sessionLines(`id-${i}`, "/p", `m${i}`));
    clearSessionInfoCache();
    const names: (keyof Io)[] = ["openSync", "fstatSync", "statSync", "readSync", "closeSync"];
    let listed: unknown[] = [];
    const first = await countCalls(names, async () => (listed = await SessionManager.listAll({ root })));
    expect(listed).toHaveLength(20);
    expect(first).toEqual({ openSync: 20, fstatSync: 20, statSync: 0, readSync: 20, closeSync: 20 });
    // Unchanged files are answered from the cache after one stat each, without opening them.
    const repeat = await countCalls(names, async () => (listed = await SessionManager.listAll({ root })));
    expect(listed).toHaveLength(20);
    expect(repeat).toEqual({ openSync: 0, fstatSync: 0, statSync: 20, readSync: 0, closeSync: 0 });
  });

  it("every listing hands out copies: changing a listed info changes no later listing, the first one's included", async () => {
    const root = tempDir();
    const dir = join(root, "sessions", cwdBucket("/p"));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "2025-01-01T00-00-00-000Z_00000001-x.jsonl"), sessionLines("one", "/p", "hello"));
    clearSessionInfoCache();
    const [first] = await SessionManager.listAll({ root });
    first!.firstMessage = "changed by a caller";
    const [again] = await SessionManager.listAll({ root });
    expect(again!.firstMessage).toBe("hello");
  });

  it("lists plain *.jsonl files (dot-named too) of plain bucket directories only: no dot-dirs, links or auxiliary files", async () => {
    const root = tempDir();
    const sessions = join(root, "sessions");
    const bucket = join(sessions, cwdBucket("/p"));
    const outside = join(root, "outside");
    mkdirSync(bucket, { recursive: true });
    mkdirSync(outside);
    mkdirSync(join(sessions, ".hidden"));
    writeFileSync(join(bucket, "2025-01-01T00-00-00-000Z_00000001-a.jsonl"), sessionLines("listed", "/p", "a"));
    writeFileSync(join(bucket, ".2025-01-01T00-00-00-000Z_00000002-b.jsonl"), sessionLines("dot-file", "/p", "b"));
    writeFileSync(join(bucket, "x.quarantine.jsonl"), sessionLines("quarantine", "/p", "c"));
    writeFileSync(join(bucket, "2025-01-01T00-00-00-000Z_00000003-c.json"), sessionLines("not-jsonl", "/p", "d"));
    mkdirSync(join(bucket, "2025-01-01T00-00-00-000Z_00000004-d.jsonl"));
    writeFileSync(join(outside, "2025-01-01T00-00-00-000Z_00000005-e.jsonl"), sessionLines("linked", "/p", "e"));
    symlinkSync(join(outside, "2025-01-01T00-00-00-000Z_00000005-e.jsonl"), join(bucket, "2025-01-01T00-00-00-000Z_00000006-f.jsonl"));
    symlinkSync(outside, join(sessions, "linked-bucket"));
    writeFileSync(join(sessions, ".hidden", "2025-01-01T00-00-00-000Z_00000007-g.jsonl"), sessionLines("hidden", "/p", "g"));
    writeFileSync(join(sessions, "2025-01-01T00-00-00-000Z_00000008-h.jsonl"), sessionLines("top-level", "/p", "h"));
    writeFileSync(join(bucket, ".2025-01-01T00-00-00-000Z_00000002-b.jsonl.4242.0123456789ab.tmp"), sessionLines("temp", "/p", "t"));
    const all = await SessionManager.listAll({ root });
    expect(all.map((s) => [s.id, basename(s.path)]).sort()).toEqual([
      ["dot-file", ".2025-01-01T00-00-00-000Z_00000002-b.jsonl"],
      ["listed", "2025-01-01T00-00-00-000Z_00000001-a.jsonl"],
    ]);
    expect((await SessionManager.list("/p", { root })).map((s) => s.id).sort()).toEqual(["dot-file", "listed"]);
  });
});
