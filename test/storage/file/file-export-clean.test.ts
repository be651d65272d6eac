import { appendFileSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { resolveSessionManagerOptions } from "../../../src/session/session-options.ts";
import { exportFile } from "../../../src/storage/file/file-export.ts";
import { tempDir } from "../../support/temp-dir.ts";

async function lines(path: string, root: string): Promise<{ all: string[]; damaged: number | undefined }> {
  const snapshot = await exportFile(path, resolveSessionManagerOptions({ root }));
  const all = [snapshot.headerLine];
  for await (const line of snapshot.lines()) all.push(line);
  return { all, damaged: snapshot.damaged };
}

async function session(root: string): Promise<{ path: string; ids: string[] }> {
  const m = await SessionManager.create("/proj", { root });
  const ids = [m.appendMessage({ role: "user", content: "one" }), m.appendMessage({ role: "user", content: "two" })];
  await m.close();
  return { path: m.sessionFile!, ids };
}

describe("exportFile: a clean file streams as stored; anything the loader would repair goes through it", () => {
  it("a clean file: its lines exactly, none damaged", async () => {
    const root = tempDir();
    const { path } = await session(root);
    expect(await lines(path, root)).toEqual({ all: readFileSync(path, "utf8").split("\n").slice(0, -1), damaged: 0 });
  });

  it.each([
    [
      "a repeated entry id",
      (ids: string[]) => `{"type":"message","id":"${ids[0]}","parentId":null,"message":{"role":"user","content":"x"}}\n`,
    ],
    ["an entry without an id", () => `{"type":"message","parentId":null,"message":{"role":"user","content":"x"}}\n`],
    ["a line that is not JSON", () => "not json\n"],
    ["a torn last line", () => `{"type":"message","id":"ffff0001","par`],
  ])("%s: read through the loader, the bad line left out and counted", async (_what, bad) => {
    const root = tempDir();
    const { path, ids } = await session(root);
    const before = readFileSync(path, "utf8").split("\n").slice(0, -1);
    appendFileSync(path, bad(ids));
    const out = await lines(path, root);
    expect(out.damaged).toBe(1);
    expect(out.all.map((l) => JSON.parse(l).id)).toEqual(before.map((l) => JSON.parse(l).id));
  });
});
