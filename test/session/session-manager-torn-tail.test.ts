import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Every quarantined fragment, as the exact bytes it had. */
function quarantined(sessionFile: string): Buffer[] {
  const q = quarantinePathOf(sessionFile);
  if (!existsSync(q)) return [];
  return readFileSync(q, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const r = JSON.parse(l);
      expect(r).toMatchObject({ type: "quarantine", reason: expect.any(String), offset: expect.any(Number) });
      return typeof r.text === "string" ? Buffer.from(r.text, "utf8") : Buffer.from(r.base64, "base64");
    });
}

describe("torn tail repair", () => {
  it("cut at every byte offset of the last line: reopen, append, reopen keeps everything", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "first" });
    m.appendMessage({ role: "assistant", content: "second" });
    m.appendMessage({ role: "user", content: "last — ünïcødé 🎉 line" });
    await m.close();
    const original = readFileSync(m.sessionFile!);
    const lastStart = original.subarray(0, original.length - 1).lastIndexOf(0x0a) + 1;
    const before = m.getEntries();
    const dir = tempDir();

    for (let cut = lastStart + 1; cut < original.length; cut++) {
      const path = join(dir, `s${cut}.jsonl`);
      writeFileSync(path, original.subarray(0, cut));
      const complete = cut === original.length - 1; // only the final \n is missing
      const opened = await SessionManager.open(path, { root });
      expect(opened.loadReport.tornTail).toBe(!complete);
      const id = opened.appendMessage({ role: "assistant", content: `after cut ${cut}` });
      await opened.close();

      const again = await SessionManager.open(path, { root });
      const entries = again.getEntries();
      expect(again.loadReport.malformed).toEqual([]);
      expect(again.loadReport.tornTail).toBe(false);
      expect(entries.slice(0, 2)).toEqual(before.slice(0, 2));
      if (complete) expect(entries[2]).toEqual(before[2]);
      expect(entries.at(-1)).toMatchObject({ id, message: { content: `after cut ${cut}` } });
      expect(entries).toHaveLength(complete ? 4 : 3);
      expect(quarantined(path)).toEqual(complete ? [] : [original.subarray(lastStart, cut)]);
      await again.close();
    }
  });

  it("a read-only open reports a torn tail but never repairs it", async () => {
    const root = tempDir();
    const path = join(root, "t.jsonl");
    const text =
      '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n{"type":"message","id":"aaaaaaaa","parentId":null,"timest' +
      'amp":"t","message":{"role":"user","content":"x"}}\n{"type":"mess';
    writeFileSync(path, text);
    const ro = await SessionManager.open(path, { root, readOnly: true });
    expect(ro.loadReport.tornTail).toBe(true);
    expect(ro.getEntries()).toHaveLength(1);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(existsSync(quarantinePathOf(path))).toBe(false);
  });

  it("a legacy file with a malformed middle line and a torn tail is rewritten as v3 with both quarantined", async () => {
    const root = tempDir();
    const path = join(root, "legacy.jsonl");
    const bad = '{"type":"message", "id": broken';
    writeFileSync(
      path,
      [
        '{"type":"session","id":"legacy","timestamp":"t","cwd":"/"}',
        '{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}',
        bad,
        '{"type":"message","timestamp":"t","message":{"role":"assistant","content":"b"}}',
        '{"type":"mess',
      ].join("\n"),
    );
    const m = await SessionManager.open(path, { root });
    expect(m.loadReport).toMatchObject({
      migratedFrom: 1,
      tornTail: true,
      malformed: [{ line: 3, reason: expect.stringContaining("invalid JSON") }],
    });
    await m.close();
    expect(quarantined(path).map((b) => b.toString())).toEqual([bad, '{"type":"mess']);
    const disk = readFileSync(path, "utf8");
    expect(disk.endsWith("\n")).toBe(true);
    expect(
      disk
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).type),
    ).toEqual(["session", "message", "message"]);
  });

  it("malformed middle lines of a v3 file stay in place until a rewrite", async () => {
    const root = tempDir();
    const path = join(root, "v3.jsonl");
    const text =
      '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n{oops}\n{"type":"message","id":"aaaaaaaa","parentId":null' +
      ',"timestamp":"t","message":{"role":"user","content":"x"}}\n';
    writeFileSync(path, text);
    const m = await SessionManager.open(path, { root });
    expect(m.loadReport.malformed).toEqual([{ line: 2, offset: text.indexOf("{oops}"), reason: expect.stringContaining("invalid JSON") }]);
    m.appendMessage({ role: "assistant", content: "y" });
    await m.close();
    expect(readFileSync(path, "utf8").startsWith(text)).toBe(true);
  });

  it("trailing NUL bytes after a crash are cut off like a torn tail", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    m.appendMessage({ role: "user", content: "x" });
    await m.close();
    const path = m.sessionFile!;
    const size = readFileSync(path).length;
    writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.alloc(4096)]));
    const reopened = await SessionManager.open(path, { root });
    expect(reopened.loadReport.nulRuns).toBe(1);
    reopened.appendMessage({ role: "assistant", content: "y" });
    await reopened.close();
    const final = await SessionManager.open(path, { root, readOnly: true });
    expect(final.getEntries().map((e) => (e.message as { content: string }).content)).toEqual(["x", "y"]);
    expect(readFileSync(path).includes(0)).toBe(false);
    expect(readFileSync(path).length).toBeGreaterThan(size);
  });
});
