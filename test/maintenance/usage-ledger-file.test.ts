import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { accountSessionFile } from "../../src/maintenance/file-accounting.ts";
import { appendLedgerFile, readLedgerFile } from "../../src/maintenance/usage-ledger-file.ts";
import { scanLimits } from "../../src/session/session-file-reader.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const WRITER = join(import.meta.dirname, "helpers/ledger-writer.ts");

const row = (key: string) => ({
  sessionId: "s",
  cwd: "/w",
  key,
  timestamp: null,
  provider: null,
  model: null,
  source: "usage" as const,
  kind: "cache_warm",
  tokens: { input: 1, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 1 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

describe("the usage ledger file", () => {
  it("keeps every batch a writer acknowledged when it is killed (SIGKILL) mid-run, and takes appends after", async () => {
    const dir = tempDir();
    const path = join(dir, "usage-ledger.jsonl");
    const child = spawnTs(WRITER, [path, "crash"]);
    let acknowledged = -1;
    await new Promise<void>((resolve) => {
      onLines(child, (line) => {
        acknowledged = Number(line);
        if (acknowledged === 20) child.kill("SIGKILL");
      });
      child.on("close", () => resolve());
    });
    expect(acknowledged).toBeGreaterThanOrEqual(20);
    const { rows, problems } = readLedgerFile(path);
    for (let n = 0; n <= acknowledged; n++)
      for (let i = 0; i < 50; i++)
        expect(
          rows.some((r) => r.key === `${n}-${i}`),
          `${n}-${i}`,
        ).toBe(true);
    expect(problems.length).toBeLessThanOrEqual(1); // at most the batch being written when killed
    expect(rows.every((r) => r.deleted && r.deletedAt === "2026-01-01T00:00:00.000Z")).toBe(true);
    expect(appendLedgerFile(path, [row("after")], "2026-01-02T00:00:00.000Z")).toBe(1);
    expect(readLedgerFile(path).rows.at(-1)).toMatchObject({ key: "after", deleted: true });
  }, 60_000);

  it("a row already there is not written again; a line that is no row is reported and left in place", () => {
    const path = join(tempDir(), "usage-ledger.jsonl");
    expect(appendLedgerFile(path, [row("a"), row("b")], "2026-01-01T00:00:00.000Z")).toBe(2);
    writeFileSync(path, `${readFileSync(path, "utf8")}{"type":"something else"}\n`);
    const before = readFileSync(path);
    expect(appendLedgerFile(path, [row("b"), row("a")], "2026-01-01T00:00:00.000Z")).toBe(0);
    expect(readFileSync(path)).toEqual(before);
    expect(readLedgerFile(path)).toMatchObject({ rows: [{ key: "a" }, { key: "b" }], problems: [{ line: 3, reason: "not a usage row" }] });
  });

  it("a row two recorders both appended (each read the ledger before the other wrote) counts once", () => {
    const path = join(tempDir(), "usage-ledger.jsonl");
    appendLedgerFile(path, [row("a")], "2026-01-01T00:00:00.000Z");
    const line = readFileSync(path, "utf8");
    writeFileSync(path, line + line.replace("2026-01-01", "2026-01-02"));
    expect(readLedgerFile(path)).toEqual({
      rows: [expect.objectContaining({ key: "a", deletedAt: "2026-01-01T00:00:00.000Z" })],
      problems: [],
    });
  });

  it("never writes through a link planted under the ledger's name (PERSISTENCE_FAILED, target untouched)", () => {
    const dir = tempDir();
    const target = join(dir, "elsewhere.txt");
    writeFileSync(target, "mine\n");
    symlinkSync(target, join(dir, "usage-ledger.jsonl"));
    expect(() => appendLedgerFile(join(dir, "usage-ledger.jsonl"), [row("a")], "2026-01-01T00:00:00.000Z")).toThrow(
      expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
    );
    expect(readFileSync(target, "utf8")).toBe("mine\n");
  });
});

describe("accountSessionFile", () => {
  it("streams a line longer than the string limit without holding it: counted oversized, the kinds still the file's size", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "b"));
    const path = join(dir, "b", "s.jsonl");
    const header = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2025-06-01T00:00:00.000Z", cwd: "/w" });
    const giant = JSON.stringify({ type: "message", id: "aaaaaaaa", parentId: null, message: { role: "user", content: "x".repeat(5000) } });
    writeFileSync(path, `${header}\n${giant}\n`);
    const saved = { ...scanLimits };
    scanLimits.maxLineBytes = 1000;
    scanLimits.keepBytes = 100;
    try {
      const account = accountSessionFile(path)!;
      expect(account.kinds.oversized).toBe(giant.length + 1);
      expect(account.bytes).toBe(header.length + 1 + giant.length + 1);
      expect(account.kinds.other).toBe(header.length + 1);
    } finally {
      Object.assign(scanLimits, saved);
    }
    expect(accountSessionFile(join(dir, "absent.jsonl"))).toBeNull();
    expect(existsSync(join(dir, "absent.jsonl"))).toBe(false);
  });
});
