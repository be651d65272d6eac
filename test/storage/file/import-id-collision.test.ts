import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../../support/cli.ts";
import { tempDir } from "../../support/temp-dir.ts";

/** A one-message session file with `id`, recorded at one fixed time. */
function sessionText(id: string, text: string): string {
  const header = { type: "session", version: 3, id, timestamp: "2026-01-02T03:04:05.000Z", cwd: "/collide" };
  const message = {
    type: "message",
    id: "10000001",
    parentId: null,
    timestamp: "2026-01-02T03:04:06.000Z",
    message: { role: "user", content: text, timestamp: 1 },
  };
  return `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`;
}

/** Every file under `dir` (relative). */
function files(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<{ isFile(): boolean; parentPath: string; name: string }>)
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe("two ids of one file-safe name (issue 32 #4)", () => {
  it("the second import is a conflict found before anything is written; the first session is untouched", async () => {
    const root = tempDir();
    const work = tempDir();
    writeFileSync(join(work, "one.jsonl"), sessionText("run.1", "first"));
    writeFileSync(join(work, "two.jsonl"), sessionText("run_1", "second"));
    expect((await cli(["import", join(work, "one.jsonl"), "--root", root])).code).toBe(0);
    const sessions = join(root, "sessions");
    const before = files(sessions).map((f) => [f, readFileSync(join(sessions, f), "utf8")]);
    const second = await cli(["import", join(work, "two.jsonl"), "--root", root]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("IMPORT_CONFLICT");
    expect(files(sessions).map((f) => [f, readFileSync(join(sessions, f), "utf8")])).toEqual(before);
  });

  it("two ids of one file-safe name and the same entries are a conflict too, never the other session 'unchanged'", async () => {
    // outside review: the header's id differs, the entries are equal (a copy of a transcript under
    // another id): the second import said "unchanged" and imported nothing
    const root = tempDir();
    const work = tempDir();
    writeFileSync(join(work, "one.jsonl"), sessionText("run.1", "same words"));
    writeFileSync(join(work, "two.jsonl"), sessionText("run_1", "same words"));
    expect((await cli(["import", join(work, "one.jsonl"), "--root", root])).code).toBe(0);
    const sessions = join(root, "sessions");
    const before = files(sessions).map((f) => [f, readFileSync(join(sessions, f), "utf8")]);
    const second = await cli(["import", join(work, "two.jsonl"), "--root", root]);
    expect([second.code, second.stderr]).toEqual([1, expect.stringContaining("IMPORT_CONFLICT")]);
    expect(files(sessions).map((f) => [f, readFileSync(join(sessions, f), "utf8")])).toEqual(before);
  });
});
