import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync, ftruncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { cwdBucket, quarantinePathOf } from "../../src/session/paths.ts";
import { scanLimits } from "../../src/session/session-file-reader.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

const LIMIT = 4096;
const saved = { ...scanLimits };
afterEach(() => Object.assign(scanLimits, saved));

const header = (cwd: string, version = 3) =>
  JSON.stringify({ type: "session", version, id: "0190aaaa-0000-7000-8000-000000000001", timestamp: "2025-01-01T00:00:00.000Z", cwd });
const entry = (id: string, parentId: string | null, text: string) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: text } });

/** A session file in the store's bucket of `cwd` whose third line is `giant`. */
function writeSession(root: string, cwd: string, giant: string, options: { version?: number; terminated?: boolean } = {}): string {
  const path = join(root, "sessions", cwdBucket(cwd), "2025-01-01T00-00-00-000Z_0190aaaa-0000-7000-8000-000000000001.jsonl");
  const lines = [header(cwd, options.version), entry("a1", null, "first"), giant, entry("a3", "a1", "third")];
  if (options.terminated === false) lines.splice(3, 1);
  const text = lines.join("\n") + (options.terminated === false ? "" : "\n");
  mkdirSync(join(root, "sessions", cwdBucket(cwd)), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const giantLine = entry("a2", "a1", "x".repeat(3 * LIMIT));

describe("a line longer than the scan limit", () => {
  it("is a coded load-report problem; the rest of the session opens, the bytes stay on disk, appends work", async () => {
    scanLimits.maxLineBytes = LIMIT;
    const root = tempDir();
    const cwd = join(root, "p");
    const path = writeSession(root, cwd, giantLine);
    const before = readFileSync(path);
    const warnings: StoreWarning[] = [];
    for (const readOnly of [true, false]) {
      const m = await SessionManager.open(path, { root, readOnly, onWarning: (w) => warnings.push(w) });
      expect(m.getEntries().map((e) => e.id)).toEqual(["a1", "a3"]);
      expect(m.loadReport.malformed).toEqual([
        { line: 3, offset: before.indexOf(giantLine), reason: `line too large (${Buffer.byteLength(giantLine)} bytes)` },
      ]);
      expect(m.loadReport.bytesRead).toBe(before.length);
      if (!readOnly) m.appendMessage({ role: "user", content: "after" });
      await m.close();
    }
    expect(warnings.map((w) => w.code)).toEqual(["MALFORMED_LINES", "MALFORMED_LINES"]);
    const after = readFileSync(path);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(after.subarray(before.length).toString()).toMatch(/^\{.*"after".*\}\n$/);
  });

  it("listing and continueRecent report the session instead of throwing", async () => {
    scanLimits.maxLineBytes = LIMIT;
    const root = tempDir();
    const cwd = join(root, "p");
    const path = writeSession(root, cwd, giantLine);
    expect((await SessionManager.list(cwd, { root })).map((s) => s.path)).toEqual([path]);
    const m = await SessionManager.continueRecent(cwd, { root });
    expect(m.sessionFile).toBe(path);
    expect(m.loadReport.malformed.map((p) => p.reason)).toEqual([expect.stringMatching(/^line too large/)]);
    await m.close();
  });

  it("an unterminated too-large final line is kept in place, not cut off as a torn tail", async () => {
    scanLimits.maxLineBytes = LIMIT;
    const root = tempDir();
    const path = writeSession(root, join(root, "p"), giantLine, { terminated: false });
    const before = readFileSync(path);
    const m = await SessionManager.open(path, { root });
    expect(m.loadReport.tornTail).toBe(false);
    expect(m.loadReport.malformed.map((p) => p.line)).toEqual([3]);
    m.appendMessage({ role: "user", content: "after" });
    await m.close();
    const after = readFileSync(path);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(after[before.length]).toBe(0x0a);
  });

  it("a too-large header line is BAD_HEADER (never overwritten); continueRecent skips it", async () => {
    scanLimits.maxLineBytes = LIMIT;
    const root = tempDir();
    const cwd = join(root, "p");
    const path = writeSession(root, cwd, giantLine);
    const huge = JSON.stringify({
      type: "session",
      version: 3,
      id: "0190aaaa-0000-7000-8000-000000000001",
      timestamp: "2025-01-01T00:00:00.000Z",
      cwd,
      pad: "y".repeat(2 * LIMIT),
    });
    writeFileSync(path, `${huge}\n${entry("a1", null, "first")}\n`);
    const before = readFileSync(path);
    await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "BAD_HEADER" });
    const m = await SessionManager.continueRecent(cwd, { root });
    expect(m.sessionFile).not.toBe(path);
    await m.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("a legacy file rewritten on open quarantines the too-large line's exact bytes (streamed as base64)", async () => {
    scanLimits.maxLineBytes = LIMIT;
    const root = tempDir();
    const path = writeSession(root, join(root, "p"), giantLine, { version: 2 });
    const m = await SessionManager.open(path, { root });
    expect(m.loadReport.migratedFrom).toBe(2);
    await m.close();
    expect(readFileSync(path, "utf8")).not.toContain("xxxx");
    const records = readFileSync(quarantinePathOf(path), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { base64: string; line: number; reason: string });
    expect(records).toHaveLength(1);
    expect(records[0]!.line).toBe(3);
    expect(records[0]!.reason).toMatch(/^line too large/);
    expect(Buffer.from(records[0]!.base64, "base64").toString()).toBe(giantLine);
  });

  it("a real line past V8's string limit (sparse file) opens with the problem reported", async () => {
    const root = tempDir();
    const cwd = join(root, "p");
    const path = writeSession(root, cwd, entry("a2", "a1", "small"));
    // Replace line 3 by a ~520 MiB line: a JSON prefix, a sparse hole of zeros, then its end.
    const text = readFileSync(path, "utf8").split("\n");
    const head = `${text[0]}\n${text[1]}\n`;
    const start = Buffer.byteLength(head);
    const giantLength = 520 * 1024 * 1024 + 1;
    const fd = openSync(path, "w");
    writeSync(fd, head);
    writeSync(fd, '{"type":"message","id":"a2","parentId":"a1","message":{"role":"user","content":"');
    ftruncateSync(fd, start + giantLength - 3);
    writeSync(fd, '"}}\n', start + giantLength - 3);
    writeSync(fd, `${text[3]}\n`, start + giantLength + 1);
    closeSync(fd);
    const m = await SessionManager.continueRecent(cwd, { root });
    expect(m.sessionFile).toBe(path);
    expect(m.getEntries().map((e) => e.id)).toEqual(["a1", "a3"]);
    expect(m.loadReport.malformed).toEqual([{ line: 3, offset: start, reason: `line too large (${giantLength} bytes)` }]);
    await m.close();
  }, 60_000);
});
