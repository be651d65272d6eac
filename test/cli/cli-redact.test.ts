import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { REDACTION_KEY_FILE } from "../../src/session/redaction-key.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const GH = "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";
const AWS = "AKIAZZZZZZZZZZZZZZZZ";

/** A store written without redaction, secrets in a user message and in a tool result. */
async function leakyStore() {
  const root = tempDir();
  const m = await SessionManager.create(join(root, "proj"), { root });
  const first = m.appendMessage({ role: "user", content: `push with ${GH}` });
  m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
  m.appendMessage({ role: "toolResult", toolCallId: "call_1", content: [{ type: "text", text: `aws_access_key_id=${AWS}` }] });
  await m.close();
  return { root, file: m.sessionFile!, id: m.sessionId, first };
}

describe("transcript-store redact", () => {
  it("--dry-run reports per rule and writes nothing (no key file either)", async () => {
    const { root, file } = await leakyStore();
    const before = readFileSync(file);
    const run = await cli(["redact", "--root", root, "--dry-run", "--json"]);
    expect(run.code).toBe(0);
    const fileRecord = run.records.find((r) => r.type === "file")!;
    expect(fileRecord).toMatchObject({ status: "planned", entries: 2, found: { "github-token": 1, "aws-access-key": 1 } });
    expect(run.records.find((r) => r.type === "totals")).toMatchObject({ files: 1, rewritten: 1, failed: 0, dryRun: true });
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(existsSync(join(root, REDACTION_KEY_FILE))).toBe(false);
  });

  it("rewrites in place with markers, keeps ids and structure, keeps a backup, and a second run finds nothing", async () => {
    const { root, file, id, first } = await leakyStore();
    const original = readFileSync(file, "utf8");
    const run = await cli(["redact", id, "--root", root, "--backup"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("github-token×1, aws-access-key×1");
    const after = readFileSync(file, "utf8");
    expect(after).not.toContain(GH);
    expect(after).not.toContain(AWS);
    expect(after).toMatch(/push with \[REDACTED:github-token:[0-9a-f]{8}\]/);
    expect(after).toMatch(/aws_access_key_id=\[REDACTED:aws-access-key:[0-9a-f]{8}\]/);
    expect(readFileSync(`${file}.bak`, "utf8")).toBe(original);
    expect(statSync(join(root, REDACTION_KEY_FILE)).mode & 0o777).toBe(0o600);
    const lines = (text: string) =>
      text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
    const [a, b] = [lines(original), lines(after)];
    expect(b.map((e) => [e.type, e.id, e.parentId])).toEqual(a.map((e) => [e.type, e.id, e.parentId]));
    expect(b[1].id).toBe(first);
    expect(b[3].message.toolCallId).toBe("call_1");

    const again = await cli(["redact", "--root", root, "--json"]);
    expect(again.code).toBe(0);
    expect(again.records.find((r) => r.type === "file")).toMatchObject({ status: "current", entries: 0, found: {} });
    expect(readFileSync(file, "utf8")).toBe(after);
    // the session still opens and holds the markers
    const m = await SessionManager.open(file, { root, readOnly: true });
    expect(JSON.stringify(m.getEntries())).toContain("[REDACTED:github-token:");
    await m.close();
  });

  it("uses the store's key: markers match those the write-time stage made", async () => {
    const root = tempDir();
    const w = await SessionManager.create(join(root, "proj"), { root, redact: "secrets" });
    w.appendMessage({ role: "user", content: GH });
    await w.close();
    const { file } = await (async () => {
      const m = await SessionManager.create(join(root, "proj"), { root });
      m.appendMessage({ role: "user", content: GH });
      await m.close();
      return { file: m.sessionFile! };
    })();
    expect((await cli(["redact", file, "--root", root])).code).toBe(0);
    const marker = (path: string) => /\[REDACTED:github-token:[0-9a-f]{8}\]/.exec(readFileSync(path, "utf8"))![0];
    expect(marker(file)).toBe(marker(w.sessionFile!));
  });

  it("refuses a database store with INVALID_OPTION (not supported yet)", async () => {
    const root = tempDir();
    const run = await cli(["redact", "--root", root, "--store", "postgres://nobody@127.0.0.1:1/none", "--json"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('"code":"INVALID_OPTION"');
  });
});
