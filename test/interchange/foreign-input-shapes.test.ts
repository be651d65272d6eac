import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { importForeign } from "../../src/interchange/import-foreign.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/foreign");
const CLAUDE = join(FIXTURES, "claude-code/v2.1.39-trimmed-258c7280.jsonl");
const CODEX = join(FIXTURES, "codex/v0.129.0-turn-2.jsonl");

const SID = "5d0c1a2b-0000-4000-8000-00000000cc01";
const record = (uuid: string, parentUuid: string | null, extra: Record<string, unknown> = {}) => ({
  parentUuid,
  isSidechain: false,
  userType: "external",
  cwd: "/home/demo/p",
  sessionId: SID,
  version: "2.1.0",
  type: "user",
  message: { role: "user", content: "hello" },
  uuid,
  timestamp: "2026-01-01T00:00:00.000Z",
  ...extra,
});

/** A JSON text nested `depth` arrays deep (built as text: no recursion in the test either). */
function deepJson(depth: number): string {
  return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}

describe("import --from follows a symlinked root directory", () => {
  for (const [format, fixture] of [
    ["claude-code", CLAUDE],
    ["codex", CODEX],
  ] as const) {
    it(`${format}: a symlinked tree root is walked like the directory it names`, async () => {
      const dir = tempDir("ts-foreign-link-");
      const real = join(dir, "real-tree", "2026");
      mkdirSync(real, { recursive: true });
      copyFileSync(fixture, join(real, "one.jsonl"));
      const link = join(dir, "projects");
      symlinkSync(join(dir, "real-tree"), link);
      // a link planted inside the tree is still not followed
      const outside = join(dir, "outside");
      mkdirSync(outside);
      copyFileSync(fixture, join(outside, "planted.jsonl"));
      symlinkSync(outside, join(dir, "real-tree", "planted-dir"));
      symlinkSync(join(outside, "planted.jsonl"), join(real, "planted-file.jsonl"));
      const root = join(dir, "store");
      const reports = await importForeign(format, [link], { root });
      expect(reports.map((r) => [r.path, r.status])).toEqual([[join(link, "2026", "one.jsonl"), "created"]]);
    });
  }
});

describe("import --from: a record nested 20,000 levels deep", () => {
  it("is kept as its text with a coded problem, and the rest of the file and directory are imported", async () => {
    const dir = tempDir("ts-foreign-deep-");
    const tree = join(dir, "tree");
    mkdirSync(tree);
    copyFileSync(CLAUDE, join(tree, "a-good.jsonl"));
    const head = `{"type":"user","uuid":"u2","parentUuid":"u1","sessionId":"${SID}","cwd":"/home/demo/p"`;
    const deep = `${JSON.stringify(record("u1", null))}\n${head},"message":{"role":"user","content":${deepJson(20_000)}}}\n`;
    writeFileSync(join(tree, "b-deep.jsonl"), deep);
    copyFileSync(CODEX, join(tree, "c-after.jsonl"));
    const root = join(dir, "store");
    const reports = await importForeign("claude-code", [tree], { root });
    expect(reports.map((r) => r.path.slice(tree.length + 1))).toEqual(["a-good.jsonl", "b-deep.jsonl", "c-after.jsonl"]);
    expect(reports[0]!.status).toBe("created");
    expect(reports[1]!.status).toBe("created");
    expect(reports[1]!.problems).toEqual([{ line: 2, code: "NESTED_TOO_DEEP", reason: "nested deeper than 998 levels" }]);
    expect(reports[1]!.counts).toEqual({ records: 2, mapped: 1, kept: 0, damaged: 1 });
    const m = await SessionManager.open(reports[1]!.location!, { root, readOnly: true });
    expect(m.getEntries().map((e) => e.type)).toEqual(["message", "custom"]);
    await m.close();
    // the codex file is the wrong format for claude-code: refused with its own code, not skipped
    expect(reports[2]!.status).toBe("refused");
  });
});

describe("import --from: a transcript whose cwd is empty, relative or missing", () => {
  for (const [label, cwd] of [
    ["empty", ""],
    ["relative", "some/where"],
    ["missing", undefined],
  ] as const) {
    it(`${label}: filed under the visible placeholder, never the importer's cwd`, async () => {
      const dir = tempDir("ts-foreign-cwd-");
      const src = join(dir, `${SID}.jsonl`);
      const r = record("u1", null, { cwd });
      if (cwd === undefined) delete (r as Record<string, unknown>).cwd;
      writeFileSync(src, `${JSON.stringify(r)}\n`);
      const root = join(dir, "store");
      const [report] = await importForeign("claude-code", [src], { root, cwd: dir });
      expect(report!.status).toBe("created");
      const here = await SessionManager.list(process.cwd(), { root });
      expect(here).toEqual([]);
      const placed = await SessionManager.list("/unknown-cwd", { root });
      expect(placed.map((s) => s.id)).toEqual([report!.id]);
    });
  }
});
