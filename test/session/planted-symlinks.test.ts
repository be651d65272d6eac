import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync, appendFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

const OUTSIDE_BYTES = "precious file outside the store\n";

/** A file outside the store that a planted link points at. */
function outsideFile(): string {
  const path = join(tempDir("ts-outside-"), "precious.txt");
  writeFileSync(path, OUTSIDE_BYTES);
  return path;
}

describe("symlinks planted at a session's journal and quarantine names are never written through", () => {
  it("moveTo with a link at <stem>.move.json: MOVE_FAILED, the link's target untouched, the session unmoved", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "old"), { root });
    m.appendMessage({ role: "user", content: "hello" });
    const from = m.sessionFile!;
    const before = readFileSync(from);
    const target = outsideFile();
    symlinkSync(target, from.replace(/\.jsonl$/, ".move.json"));
    await expect(m.moveTo(join(root, "new"))).rejects.toMatchObject({ code: "MOVE_FAILED" });
    expect(readFileSync(target, "utf8")).toBe(OUTSIDE_BYTES);
    expect(readFileSync(from).equals(before)).toBe(true);
    const buckets = readdirSync(join(root, "sessions"));
    const leftovers = buckets.flatMap((b) => readdirSync(join(root, "sessions", b))).filter((n) => /\.(tmp|move-in\.json)$/.test(n));
    expect(leftovers).toEqual([]);
    m.appendMessage({ role: "assistant", content: "still here" });
    await m.close();
  });

  it("torn-tail repair with a link at <stem>.quarantine.jsonl: PERSISTENCE_FAILED, nothing written anywhere", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "hello" });
    await m.close();
    const path = m.sessionFile!;
    appendFileSync(path, '{"type":"message","id":"torn"');
    const before = readFileSync(path);
    const target = outsideFile();
    symlinkSync(target, quarantinePathOf(path));
    await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    expect(readFileSync(target, "utf8")).toBe(OUTSIDE_BYTES);
    expect(readFileSync(path).equals(before)).toBe(true);
    // a read-only open never repairs, so it still reads the session
    const ro = await SessionManager.open(path, { root, readOnly: true });
    expect(ro.getEntries()).toHaveLength(1);
    await ro.close();
    expect(existsSync(dirname(path))).toBe(true);
  });
});
