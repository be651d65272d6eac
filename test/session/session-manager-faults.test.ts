import { readdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { injectFault } from "../support/fault.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { blobDirEntries } from "../support/blob-dir.ts";

describe("SessionManager under disk faults", () => {
  it("ENOSPC on an append: PERSISTENCE_FAILED, no partial line, not in memory, next append works", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    const first = m.appendMessage({ role: "user", content: "ok" });
    const before = readFileSync(m.sessionFile!);

    // A short write followed by ENOSPC: the file must be cut back to the last whole line.
    let calls = 0;
    const restore = injectFault("writeSync", (call, args) => {
      calls++;
      if (call === 0) {
        const [fd, buf] = args as [number, Uint8Array];
        // write half of the line for real, then report the disk full
        writeSync(fd, buf.subarray(0, Math.floor(buf.length / 2)));
        return "ENOSPC";
      }
      return undefined;
    });
    let caught: unknown;
    try {
      m.appendMessage({ role: "assistant", content: "x".repeat(5000) });
    } catch (err) {
      caught = err;
    } finally {
      restore();
    }
    expect(calls).toBe(1);
    expect(caught).toMatchObject({ code: "PERSISTENCE_FAILED", cause: { code: "ENOSPC" } });
    expect(readFileSync(m.sessionFile!).equals(before)).toBe(true);
    expect(m.getEntries().map((e) => e.id)).toEqual([first]);
    expect(m.getLeafId()).toBe(first);

    const next = m.appendMessage({ role: "assistant", content: "recovered" });
    await m.close();
    const reopened = await SessionManager.open(m.sessionFile!, { root });
    expect(reopened.loadReport.malformed).toEqual([]);
    expect(reopened.getEntries().map((e) => e.id)).toEqual([first, next]);
    expect(reopened.getEntry(next)!.parentId).toBe(first);
    await reopened.close();
  });

  it("a failing blob write aborts the append before any line is written", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    const before = readFileSync(m.sessionFile!);
    const restore = injectFault("renameSync", () => "EIO");
    try {
      expect(() =>
        m.appendMessage({ role: "user", content: [{ type: "image", data: makePng(32, 32).toString("base64"), mimeType: "image/png" }] }),
      ).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    } finally {
      restore();
    }
    expect(readFileSync(m.sessionFile!).equals(before)).toBe(true);
    expect(m.getEntries()).toEqual([]);
    expect(blobDirEntries(join(root, "blobs"))).toEqual([]); // temp file removed
    await m.close();
  });

  it("fsync failure with fsync:true also rolls the line back", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root, fsync: true });
    const before = readFileSync(m.sessionFile!);
    const restore = injectFault("fdatasyncSync", () => "EIO");
    try {
      expect(() => m.appendMessage({ role: "user", content: "x" })).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    } finally {
      restore();
    }
    expect(readFileSync(m.sessionFile!).equals(before)).toBe(true);
    m.appendMessage({ role: "user", content: "y" });
    await m.close();
  });

  it("a failed migration rewrite leaves the legacy file byte-identical", async () => {
    const root = tempDir();
    const path = join(root, "legacy.jsonl");
    const text =
      '{"type":"session","id":"l","timestamp":"t","cwd":"/"}\n{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}\n';
    writeFileSync(path, text);
    const restore = injectFault("renameSync", () => "ENOSPC");
    try {
      await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    } finally {
      restore();
    }
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(readdirSync(root).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    const m = await SessionManager.open(path, { root }); // the lock was released; retry succeeds
    expect(m.loadReport.migratedFrom).toBe(1);
    await m.close();
  });
});
