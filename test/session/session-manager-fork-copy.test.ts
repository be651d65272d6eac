import { appendFileSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

function bodyOf(path: string): string {
  const text = readFileSync(path, "utf8");
  return text.slice(text.indexOf("\n") + 1);
}

/** A v3 session file whose entry lines are spelled as this store would not write them (spaces, key order). */
async function handWrittenSession(root: string): Promise<string> {
  const m = await SessionManager.create(join(root, "proj"), { root });
  m.appendMessage({ role: "user", content: "hi" });
  const path = m.sessionFile!;
  await m.close();
  const [header] = readFileSync(path, "utf8").split("\n");
  const first = JSON.parse(readFileSync(path, "utf8").split("\n")[1]!);
  const lines = [
    header,
    `{ "message": { "content": "hi", "role": "user" }, "type": "message", "id": "${first.id}", ` +
      `"parentId": null, "timestamp": "${first.timestamp}" }`,
    `{"parentId":"${first.id}","id":"e2","type":"message","timestamp":"${first.timestamp}","message":{"role":"assistant","content":"yo"}}`,
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/** The entry ids of a file body, in order. */
function idsOf(body: string): string[] {
  return body
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).id as string);
}

describe("whole-session fork of a clean file", () => {
  it("copies the source's lines byte for byte after a new header", async () => {
    const root = tempDir();
    const path = await handWrittenSession(root);
    const m = await SessionManager.open(path, { root });
    m.appendMessage({ role: "user", content: "appended after open" });
    const fork = await m.fork();
    expect(bodyOf(fork.sessionFile!)).toBe(bodyOf(path));
    expect(JSON.parse(readFileSync(fork.sessionFile!, "utf8").split("\n")[0]!).parentSession).toBe(m.sessionId);
    expect(fork.getEntries()).toEqual(m.getEntries());
    fork.appendMessage({ role: "user", content: "fork goes on" });
    const forkPath = fork.sessionFile!;
    const entries = fork.getEntries();
    await fork.close();
    const reopened = await SessionManager.open(forkPath, { root });
    expect(reopened.getEntries()).toEqual(entries);
    expect(reopened.loadReport.malformed).toEqual([]);
    await reopened.close();
    await m.close();
  });

  it("writes memory instead when the source holds lines memory left out (malformed, torn tail)", async () => {
    const root = tempDir();
    const path = await handWrittenSession(root);
    appendFileSync(path, "not json\n");
    appendFileSync(path, '{"type":"message","id":"torn"');
    const m = await SessionManager.open(path, { root, onWarning: () => {} });
    const fork = await m.fork();
    const body = bodyOf(fork.sessionFile!);
    expect(body).not.toContain("not json");
    expect(body).not.toContain("torn");
    expect(idsOf(body)).toEqual(m.getEntries().map((e) => e.id));
    await fork.close();
    await m.close();
  });

  it("copies only the lines this writer knows, never a partial line past them", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: "a" });
    const known = bodyOf(m.sessionFile!);
    // An append fails halfway and its rollback fails too: 10 bytes of it stay past the known end.
    const restoreWrite = injectFault("writeSync", (call, args) => {
      if (call !== 0) return undefined;
      const [fd, buf] = args as [number, Uint8Array];
      writeSync(fd, buf.subarray(0, 10));
      return "EIO";
    });
    const restoreTruncate = injectFault("ftruncateSync", () => "EIO");
    try {
      expect(() => m.appendMessage({ role: "user", content: "b".repeat(100) })).toThrow(
        expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
      );
    } finally {
      restoreWrite();
      restoreTruncate();
    }
    expect(bodyOf(m.sessionFile!).length).toBe(known.length + 10);
    const fork = await m.fork();
    expect(bodyOf(fork.sessionFile!)).toBe(known);
    await fork.close();
    await m.close();
  });
});

describe("whole-session fork of a session opened read-only (forkFrom)", () => {
  it("copies the source's lines byte for byte", async () => {
    const root = tempDir();
    const path = await handWrittenSession(root);
    const fork = await SessionManager.forkFrom(path, join(root, "elsewhere"), { root });
    expect(bodyOf(fork.sessionFile!)).toBe(bodyOf(path));
    expect(fork.getEntries().map((e) => e.id)).toEqual([JSON.parse(bodyOf(path).split("\n")[0]!).id, "e2"]);
    await fork.close();
  });

  it("copies only what was read while another writer appends, and nothing of a file renamed over it", async () => {
    const root = tempDir();
    const path = await handWrittenSession(root);
    const read = bodyOf(path);
    const m = await SessionManager.open(path, { root, readOnly: true });
    const later = `{"type":"message","id":"e3","parentId":"e2","timestamp":"t","message":{"role":"user","content":"later"}}\n`;
    appendFileSync(path, later);
    const fork = await m.fork();
    expect(bodyOf(fork.sessionFile!)).toBe(read);
    await fork.close();

    // Another file with the same header and other lines replaces it: memory is written instead.
    const header = readFileSync(path, "utf8").split("\n")[0];
    writeFileSync(`${path}.new`, `${header}\n${later}`);
    renameSync(`${path}.new`, path);
    const second = await m.fork();
    const body = bodyOf(second.sessionFile!);
    expect(body).not.toContain("later");
    expect(idsOf(body)).toEqual(m.getEntries().map((e) => e.id));
    await second.close();
    await m.close();
  });
});
