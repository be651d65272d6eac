import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";
import { header, message } from "./helpers/sessions.ts";

const GH = "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";
/** What FTS5's tokenizer keeps of it (lowercased, split at `_`), and a tail no prefix compression splits. */
const GH_TOKEN_TAIL = "ucnzwjuvfk6lo0pinux";
/** An hour ago: old enough for the listing cache to keep a row (LISTING_RACY_MS). */
const OLD = new Date(Date.now() - 3_600_000);

/** The index files (database, WAL, shared memory) that hold `needle` in any byte, case-insensitively. */
function indexFilesHolding(root: string, needles: string[]): string[] {
  const found: string[] = [];
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    const path = join(root, "index", `sessions.sqlite${suffix}`);
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path).toString("latin1").toLowerCase();
    for (const needle of needles) if (bytes.includes(needle.toLowerCase())) found.push(`${suffix || "db"}:${needle}`);
  }
  return found;
}

async function hits(root: string, query: string): Promise<number> {
  const out = await cli(["--root", root, "search", query, "--json"]);
  // search exits 0 with hits and 1 without (as grep does)
  const n = out.records.filter((r) => r.type === "hit").length;
  expect(out.code).toBe(n > 0 ? 0 : 1);
  return n;
}

/** `n` aged sessions of plain text, so the listing cache takes the path of a large store (a whole-table load). */
function filler(root: string, n: number): void {
  for (let i = 0; i < n; i++) {
    const dir = join(root, "sessions", `-work-f${i % 7}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `2026-01-01T00-00-00-000Z_f${i}.jsonl`);
    writeFileSync(
      file,
      header(`ffff${String(i).padStart(4, "0")}-0000-4000-8000-000000000000`, `/work/f${i % 7}`) +
        message("user", `filler words number${i}`),
    );
    utimesSync(file, OLD, OLD);
  }
}

describe("what redact or purge removes is gone from the index's bytes (issue 32, #9, #10)", () => {
  it("a secret only in an artifact: after redact, search no longer finds it and the index holds none of its bytes", async () => {
    const root = tempDir("ts-erase-");
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: "run the deploy" });
    const saved = m.artifacts!.save(`export GITHUB_TOKEN=${GH}\n`, { toolType: "bash" });
    m.appendMessage({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "bash",
      content: [{ type: "text", text: `output in artifact://${saved.id}` }],
    });
    await m.close();
    expect(await hits(root, GH)).toBe(1);
    const run = await cli(["--root", root, "redact", "--json"]);
    expect(run.code).toBe(0);
    expect(run.records.find((r) => r.type === "file")).toMatchObject({ artifacts: 1 });
    expect(await hits(root, GH)).toBe(0);
    expect(indexFilesHolding(root, [GH, GH_TOKEN_TAIL])).toEqual([]);
  });

  it("after redact, the listing cache and index of a large store hold no byte of the secret (on return, after a rebuild)", async () => {
    const root = tempDir("ts-erase-");
    filler(root, 150);
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: `push with ${GH} please` });
    await m.close();
    utimesSync(m.sessionFile!, OLD, OLD);
    expect(await hits(root, GH)).toBe(1);
    clearSessionInfoCache();
    const listed = await cli(["--root", root, "ls", "--all", "--json"]);
    expect(JSON.stringify(listed.records)).toContain(GH);
    expect(indexFilesHolding(root, [GH])).not.toEqual([]);

    const redacted = await cli(["--root", root, "redact"]);
    expect(redacted.code).toBe(0);
    expect(indexFilesHolding(root, [GH, GH_TOKEN_TAIL])).toEqual([]);
    expect(await hits(root, GH)).toBe(0);
    expect((await cli(["--root", root, "index", "--rebuild"])).code).toBe(0);
    expect(indexFilesHolding(root, [GH, GH_TOKEN_TAIL])).toEqual([]);
    clearSessionInfoCache();
    expect(JSON.stringify((await cli(["--root", root, "ls", "--all", "--json"])).records)).not.toContain(GH);
  });

  it("after rm + purge (when it returns, and after a re-index), the index file holds no byte of the session's text", async () => {
    const root = tempDir("ts-erase-");
    filler(root, 80);
    const word = "zanzibarquokkaplatypus";
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: `the word is ${word} and more` });
    await m.close();
    utimesSync(m.sessionFile!, OLD, OLD);
    expect(await hits(root, word)).toBe(1);
    await cli(["--root", root, "ls", "--all"]);
    expect((await cli(["--root", root, "rm", m.sessionId])).code).toBe(0);
    expect((await cli(["--root", root, "purge", "--all"])).code).toBe(0);
    // gone when purge returns, before any search re-indexes
    expect(indexFilesHolding(root, [word])).toEqual([]);
    expect(await hits(root, word)).toBe(0);
    expect(indexFilesHolding(root, [word])).toEqual([]);
  });
});
