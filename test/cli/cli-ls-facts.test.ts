import { hasPseudoTerminal } from "../support/terminal.ts";
import { spawnSync } from "node:child_process";
import { mkdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { readSessionInfo } from "../../src/session/session-info.ts";
import { REPO_ROOT, runTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const BIN = join(REPO_ROOT, "bin/transcript-store.mjs");
/** util-linux `script` runs a command on a pseudo-terminal (stdout a TTY with a width). */
const HAS_SCRIPT = hasPseudoTerminal();

/** A pi v3 session file written line by line: a header, then `count` user/assistant messages a minute apart from `start`. */
function sessionLines(id: string, cwd: string, start: string, count: number, extra: string[] = [], pad = 0): string[] {
  const t0 = Date.parse(start);
  const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: start, cwd })];
  let parent: string | null = null;
  for (let i = 0; i < count; i++) {
    const entryId = `${id.slice(0, 4)}${String(i).padStart(4, "0")}`;
    const at = new Date(t0 + (i + 1) * 60_000);
    const role = i % 2 === 0 ? "user" : "assistant";
    const text = `message ${i} ${"x".repeat(pad)}`;
    lines.push(
      JSON.stringify({
        type: "message",
        id: entryId,
        parentId: parent,
        timestamp: at.toISOString(),
        message: { role, content: [{ type: "text", text }], timestamp: at.getTime() },
      }),
    );
    parent = entryId;
  }
  return [...lines, ...extra];
}

function writeSession(root: string, cwd: string, name: string, lines: string[], mtime: Date): string {
  const bucket = join(root, "sessions", cwdBucket(cwd));
  mkdirSync(bucket, { recursive: true });
  const path = join(bucket, name);
  writeFileSync(path, `${lines.join("\n")}\n`);
  utimesSync(path, mtime, mtime);
  return path;
}

async function lsJson(root: string, cwd: string) {
  const run = await runTs(BIN, ["ls", cwd, "--root", root, "--json"]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return run.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
}

describe("ls facts (issue 22)", () => {
  it("modified is the last message's time, not the file's mtime: recency survives a migrate", async () => {
    const root = tempDir();
    const cwd = join(root, "proj");
    const imported = new Date("2026-11-25T12:00:00.000Z"); // every file touched in the same import minute
    // `older` was last active on Jan 3, `newer` on Jan 9, but `older` was written last.
    writeSession(root, cwd, "a.jsonl", sessionLines("0190a5d2-0000-7000-8000-00000000000a", cwd, "2026-01-09T00:00:00.000Z", 4), imported);
    const older = new Date(imported.getTime() + 30_000);
    writeSession(root, cwd, "b.jsonl", sessionLines("0190a5d2-0000-7000-8000-00000000000b", cwd, "2026-01-03T00:00:00.000Z", 3), older);
    const list = await lsJson(root, cwd);
    expect(list.map((r) => r.id)).toEqual(["0190a5d2-0000-7000-8000-00000000000a", "0190a5d2-0000-7000-8000-00000000000b"]);
    expect(list.map((r) => r.modified)).toEqual(["2026-01-09T00:04:00.000Z", "2026-01-03T00:03:00.000Z"]);
  }, 30_000);

  it("a session with no message is as recent as its header; a header without a time falls back to the mtime", () => {
    const root = tempDir();
    const cwd = join(root, "proj");
    const mtime = new Date("2026-11-25T12:00:00.000Z");
    const empty = writeSession(
      root,
      cwd,
      "e.jsonl",
      sessionLines("0190a5d2-0000-7000-8000-00000000000e", cwd, "2026-01-03T00:00:00.000Z", 0),
      mtime,
    );
    expect(readSessionInfo(empty)!.modified.toISOString()).toBe("2026-01-03T00:00:00.000Z");
    const bare = writeSession(
      root,
      cwd,
      "f.jsonl",
      [JSON.stringify({ type: "session", version: 3, id: "0190a5d2-0000-7000-8000-00000000000f", cwd })],
      mtime,
    );
    expect(readSessionInfo(bare)!.modified.toISOString()).toBe(mtime.toISOString());
  });

  it("message counts are exact for a session far larger than the listing windows (a long last message too)", async () => {
    const root = tempDir();
    const cwd = join(root, "proj");
    const lines = sessionLines("0190a5d2-0000-7000-8000-0000000000c0", cwd, "2026-01-03T00:00:00.000Z", 452, [], 300);
    // Non-message entries between them must not count; a last message longer than a window still dates the session.
    lines.splice(
      10,
      0,
      JSON.stringify({
        type: "model_change",
        id: "mc000001",
        parentId: null,
        timestamp: "2026-01-03T00:00:00.000Z",
        provider: "p",
        modelId: "m",
      }),
    );
    lines.push(
      JSON.stringify({
        type: "message",
        id: "last0001",
        parentId: "01900451",
        timestamp: "2026-02-01T00:00:00.000Z",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "y".repeat(50_000) }],
          timestamp: Date.parse("2026-02-01T00:00:00.000Z"),
        },
      }),
    );
    writeSession(root, cwd, "c.jsonl", lines, new Date());
    const [info] = await lsJson(root, cwd);
    expect(info!.messageCount).toBe(453);
    expect(info!.messageCountExact).toBe(true);
    expect(info!.modified).toBe("2026-02-01T00:00:00.000Z");
    const table = await runTs(BIN, ["ls", cwd, "--root", root]);
    expect(table.stdout.split("\n")[2]).toMatch(/ 453 /);
    expect(table.stdout).not.toContain("~");
  }, 30_000);

  it("pi's session name (the latest session_info entry) is the title; an explicit clear falls back", async () => {
    const root = tempDir();
    const cwd = join(root, "proj");
    const info = (name: string, id: string) =>
      JSON.stringify({ type: "session_info", id, parentId: null, timestamp: "2026-01-03T00:00:00.000Z", name });
    const named = sessionLines("0190a5d2-0000-7000-8000-0000000000d0", cwd, "2026-01-03T00:00:00.000Z", 40, [], 200);
    named.splice(3, 0, info("first name", "si000001"));
    named.splice(30, 0, info("  Refactor the parser  ", "si000002"));
    const path = writeSession(root, cwd, "d.jsonl", named, new Date());
    const cleared = sessionLines("0190a5d2-0000-7000-8000-0000000000d1", cwd, "2026-01-02T00:00:00.000Z", 2, [
      info("gone", "si000003"),
      info("", "si000004"),
    ]);
    writeSession(root, cwd, "d1.jsonl", cleared, new Date());
    const list = await lsJson(root, cwd);
    expect(list.map((r) => r.title)).toEqual(["Refactor the parser", null]);
    const table = await runTs(BIN, ["ls", cwd, "--root", root]);
    expect(table.stdout).toContain("Refactor the parser");
    clearSessionInfoCache();
    expect(readSessionInfo(path)!.title).toBe("Refactor the parser");
  }, 30_000);

  it.skipIf(!HAS_SCRIPT)(
    "ls rows fit the terminal's width (cwd and title cut, marked with …); piped, nothing is cut",
    () => {
      const root = tempDir();
      const cwd = join(root, "a-project-directory-with-a-rather-long-name", "and-a-subdirectory-too");
      const title = "Refactor the session listing so that it fits the terminal — 日本語 😀 and more words after it";
      const lines = sessionLines("0190a5d2-0000-7000-8000-0000000000e0", cwd, "2026-01-03T00:00:00.000Z", 2);
      lines.push(
        JSON.stringify({ type: "session_info", id: "si000001", parentId: null, timestamp: "2026-01-03T00:00:00.000Z", name: title }),
      );
      writeSession(root, cwd, "w.jsonl", lines, new Date());
      const bin = join(REPO_ROOT, "bin/transcript-store.mjs");
      for (const cols of [100, 80, 70]) {
        const run = spawnSync(
          "script",
          ["-qec", `stty cols ${cols}; '${process.execPath}' '${bin}' ls '${cwd}' --root '${root}'`, "/dev/null"],
          {
            env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        expect(run.status, run.stdout.toString()).toBe(0);
        const rows = run.stdout.toString("utf8").replaceAll("\r\n", "\n").split("\n").filter(Boolean);
        expect(rows).toHaveLength(3);
        // 日本語 and 😀 take two cells each on a terminal.
        for (const row of rows)
          expect([...row].length + (row.match(/[\u3000-\u9fff\u{1f300}-\u{1faff}]/gu)?.length ?? 0), row).toBeLessThanOrEqual(cols);
        // The id keeps a prefix that `show` resolves.
        expect(rows[2]).toMatch(/^0190a5d2-0000/);
        expect(rows[2]).toContain("…");
        // No half character: the cut falls between code points.
        expect(run.stdout.toString("utf8")).not.toContain("\ufffd");
      }
      const piped = spawnSync(process.execPath, [bin, "ls", cwd, "--root", root], { env: { ...process.env, TRANSCRIPT_STORE_URL: "" } });
      const row = piped.stdout.toString("utf8").split("\n")[2]!;
      expect(row).toContain(cwd);
      expect(row).toContain(title);
    },
    30_000,
  );

  it("stats counts what ls lists: Claude Code and Codex files in a bucket are not sessions for either", async () => {
    const root = tempDir();
    const cwd = join(root, "proj");
    const pi = sessionLines("0190a5d2-0000-7000-8000-0000000000f0", cwd, "2026-01-03T00:00:00.000Z", 2);
    const piPath = writeSession(root, cwd, "pi.jsonl", pi, new Date());
    const claude = [
      JSON.stringify({
        type: "user",
        uuid: "u1",
        sessionId: "c1",
        cwd,
        timestamp: "2026-01-03T00:00:00.000Z",
        message: { role: "user", content: "hi" },
      }),
    ];
    writeSession(root, cwd, "claude.jsonl", claude, new Date());
    const codex = [JSON.stringify({ timestamp: "2026-01-03T00:00:00.000Z", type: "session_meta", payload: { id: "x1", cwd } })];
    writeSession(root, cwd, "codex.jsonl", codex, new Date());
    const ls = await runTs(BIN, ["ls", "--all", "--root", root, "--json"]);
    const listed = ls.stdout.split("\n").filter(Boolean);
    expect(listed).toHaveLength(1);
    const stats = await runTs(BIN, ["stats", "--root", root, "--json"]);
    expect(stats.code).toBe(0);
    const record = JSON.parse(stats.stdout.trim());
    expect(record.sessions).toBe(listed.length);
    expect(record.sessionBytes).toBe(statSync(piPath).size);
    expect(record.notSessions).toBe(2);
    const text = await runTs(BIN, ["stats", "--root", root]);
    expect(text.stdout).toMatch(/^sessions: 1 \(/);
    expect(text.stdout).toContain("2 other .jsonl file(s) are not sessions");
  }, 30_000);
});
