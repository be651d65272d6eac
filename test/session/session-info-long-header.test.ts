import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { readSessionInfo } from "../../src/session/session-info.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * A listing reads a bounded head of each file. A header line longer than that head (a cwd of
 * 64 KiB and more: the API takes any string) made the session invisible: not listed, not
 * resolvable by id, so `export <id>` said SESSION_NOT_FOUND for a session that opened by path.
 */
describe("a session whose header is longer than the listing's head", () => {
  const longCwd = `/work/${"\u202a\u00e9\u65e5".repeat(12_000)}`; // ~72 KB of UTF-8

  it("is listed, resolved by id and exported", async () => {
    const root = tempDir("ts-long-header-");
    const m = await SessionManager.create(longCwd, { root });
    m.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    await m.close();
    expect(readFileSync(m.sessionFile!).indexOf(0x0a)).toBeGreaterThan(65_536);

    const info = readSessionInfo(m.sessionFile!);
    expect(info).toMatchObject({ id: m.sessionId, cwd: longCwd, firstMessage: "hello", messageCount: 1 });
    expect((await SessionManager.list(longCwd, { root })).map((s) => s.id)).toEqual([m.sessionId]);
    expect((await SessionManager.listAll({ root })).map((s) => s.id)).toEqual([m.sessionId]);
    expect((await SessionManager.resolve(m.sessionId.slice(0, 13), "/elsewhere", { root })).path).toBe(m.sessionFile);
    const exported = await cli(["export", m.sessionId, "--root", root]);
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout.split("\n")[0]!).cwd).toBe(longCwd);
  });

  it("a header line that never ends (no newline in the file) is still no session", () => {
    const path = join(tempDir("ts-long-header-"), "s.jsonl");
    writeFileSync(path, `{"type":"session","id":"x","cwd":"${"a".repeat(200_000)}`);
    expect(readSessionInfo(path)).toBeNull();
  });
});
