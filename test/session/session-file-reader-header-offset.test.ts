import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { headerEndOffset } from "../../src/session/session-file-reader.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A v3 session whose header line is longer than 16 MiB (a big unknown header field, kept as is). */
function bigHeaderSession(dir: string): { path: string; headerLine: string; body: string } {
  const headerLine = JSON.stringify({
    type: "session",
    version: 3,
    id: "0197a000-0000-7000-8000-0000000000bb",
    timestamp: "2025-01-01T00:00:00.000Z",
    cwd: join(dir, "a"),
    notes: "n".repeat(17 << 20),
  });
  const body = '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}\n';
  const path = join(dir, "2025-01-01T00-00-00-000Z_0197a000-0000-7000-8000-0000000000bb.jsonl");
  writeFileSync(path, `${headerLine}\n${body}`);
  return { path, headerLine, body };
}

describe("headerEndOffset", () => {
  it("finds a header line longer than 16 MiB, and a header after an omp title line", () => {
    const dir = tempDir();
    const { path, headerLine } = bigHeaderSession(dir);
    expect(headerEndOffset(path)).toBe(Buffer.byteLength(headerLine) + 1);
    const titled = join(dir, "t.jsonl");
    const title = '{"type":"title","v":1,"title":"x"}   ';
    writeFileSync(titled, `${title}\n{"type":"session","id":"s"}\n{"type":"x"}\n`);
    expect(headerEndOffset(titled)).toBe(title.length + 1 + '{"type":"session","id":"s"}'.length + 1);
  });

  it("gives up after two lines that are not a header, instead of trusting a later line", () => {
    const dir = tempDir();
    const path = join(dir, "g.jsonl");
    writeFileSync(path, 'garbage\n{"type":"message"}\n{"type":"session","id":"s"}\n');
    expect(headerEndOffset(path)).toBeNull();
  });

  it("a session with a header over 16 MiB moves to another cwd with its body intact", async () => {
    const dir = tempDir();
    const { path, body } = bigHeaderSession(dir);
    const m = await SessionManager.open(path, { root: dir, sessionsDir: dir });
    await m.moveTo(join(dir, "b"));
    const moved = readFileSync(m.sessionFile!, "utf8");
    await m.close();
    expect(moved.endsWith(`\n${body}`)).toBe(true);
    expect(JSON.parse(moved.slice(0, moved.indexOf("\n"))).cwd).toBe(join(dir, "b"));
    expect((await migrateFile(m.sessionFile!, { sessionsDir: dir, blobsDir: join(dir, "blobs"), inPlace: true })).status).toBe("current");
  });
});
