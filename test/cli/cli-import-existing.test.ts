import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { io } from "../../src/io.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const header = {
  type: "session",
  version: 3,
  id: "0197a000-0000-7000-8000-00000000abcd",
  timestamp: "2025-05-01T00:00:00.000Z",
  cwd: "/home/u/imp",
};
const hi = { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "t", message: { role: "user", content: "hi" } };
const more = { type: "message", id: "bbbbbbbb", parentId: "aaaaaaaa", timestamp: "t", message: { role: "user", content: "more" } };
const ndjson = (...records: object[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;

async function continued(root: string, path: string, text: string): Promise<void> {
  const m = await SessionManager.open(path, { root });
  m.appendMessage({ role: "user", content: text });
  await m.close();
}

describe("transcript-store import never replaces an existing session (the one rule: same / ahead / diverged)", () => {
  it("a store copy continued since is left alone: unchanged, exit 0, not a byte written", async () => {
    const root = tempDir();
    const first = await cli(["import", "--root", root, "--json"], { stdin: ndjson(header, hi) });
    expect(first.records[0]).toMatchObject({ type: "imported" });
    const path = first.records[0]!.path as string;
    await continued(root, path, "continued");
    const before = readFileSync(path);
    const again = await cli(["import", "--root", root, "--json"], { stdin: ndjson(header, hi) });
    expect([again.code, again.records[0]?.type]).toEqual([0, "unchanged"]);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("a source that grew is appended: the store copy ends with the new line, byte for byte", async () => {
    const root = tempDir();
    const first = await cli(["import", "--root", root, "--json"], { stdin: ndjson(header, hi) });
    const path = first.records[0]!.path as string;
    const before = readFileSync(path);
    const again = await cli(["import", "--root", root, "--json"], { stdin: ndjson(header, hi, more) });
    expect([again.code, again.records[0]?.type, again.records[0]?.path]).toEqual([0, "appended", path]);
    expect(readFileSync(path)).toEqual(Buffer.concat([before, Buffer.from(`${JSON.stringify(more)}\n`)]));
  });

  it("a diverged copy that appears after the lookup is kept: IMPORT_CONFLICT (exit 1), not a byte written", async () => {
    const root = tempDir();
    const first = await cli(["import", "--root", root, "--json"], { stdin: ndjson(header, hi) });
    const path = first.records[0]!.path as string;
    await continued(root, path, "continued");
    const before = readFileSync(path);
    // The lookup does not see the session (it appears between the lookup and the write): that must not matter.
    const original = io.readdirSync;
    io.readdirSync = ((p: string, o?: unknown) => (p.endsWith("sessions") ? [] : original(p, o as never))) as typeof io.readdirSync;
    let again;
    try {
      again = await cli(["import", "--root", root], { stdin: ndjson(header, hi, more) });
    } finally {
      io.readdirSync = original;
    }
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("IMPORT_CONFLICT");
    expect(again.stderr).toContain("already exists");
  });
});
