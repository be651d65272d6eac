import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

async function stored(root: string): Promise<SessionManager> {
  const m = await SessionManager.create("/proj", { root });
  m.appendMessage({ role: "user", content: "hello", timestamp: 1 } as never);
  await m.close();
  return m;
}

describe("SessionManager.open by session id (issue 36 #7)", () => {
  it("an id opens the stored session; no file is made in the working directory", async () => {
    const root = tempDir();
    const m = await stored(root);
    const here = tempDir();
    const before = process.cwd();
    process.chdir(here);
    try {
      const opened = await SessionManager.open(m.sessionId, { root, readOnly: true });
      expect(opened.location).toBe(m.location);
      expect(opened.sessionId).toBe(m.sessionId);
      await opened.close();
      expect(readdirSync(here)).toEqual([]);
    } finally {
      process.chdir(before);
    }
  });

  it("an unknown id is SESSION_NOT_FOUND, and nothing is created", async () => {
    const root = tempDir();
    await stored(root);
    const here = tempDir();
    const before = process.cwd();
    process.chdir(here);
    try {
      await expectCode(SessionManager.open("0190a1b2-0000-7000-8000-000000000000", { root }), "SESSION_NOT_FOUND");
      expect(readdirSync(here)).toEqual([]);
    } finally {
      process.chdir(before);
    }
  });

  it("a path still opens a path (a new file where none was)", async () => {
    const root = tempDir();
    const path = join(tempDir(), "new.jsonl");
    const opened = await SessionManager.open(path, { root });
    await opened.close();
    expect(existsSync(path)).toBe(true);
  });
});

describe("SessionManager.resolve without a cwd (issue 36 #8)", () => {
  it("resolves store-wide", async () => {
    const root = tempDir();
    const m = await stored(root);
    const info = await (SessionManager.resolve as (arg: string, cwd?: string, o?: object) => Promise<{ id: string }>)(
      m.sessionId.slice(0, 13),
      undefined,
      { root },
    );
    expect(info.id).toBe(m.sessionId);
  });
});
