import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { REDACTION_KEY_FILE } from "../../src/crypto/redaction-key.ts";
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

  it("scrubs stored artifacts and agent outputs (bytes kept, not their summary), metadata following; reruns change nothing", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: "hi" });
    const text = m.artifacts!.save(`export GITHUB_TOKEN=${GH}\n`, { toolType: "bash" });
    const json = m.artifacts!.save({ env: { token: GH } }, { toolType: "read" });
    const raw = m.artifacts!.save(Buffer.from(GH), { toolType: "bin" });
    const out = m.artifacts!.saveAgentOutput("reviewer", `found ${AWS}`);
    await m.close();
    const dir = m.artifactsDir!;
    const log = (id: string) => join(dir, readdirSync(dir).find((f) => f.startsWith(`${id}.`) && f.endsWith(".log"))!);
    const before = readFileSync(log(text.id), "utf8");

    const dry = await cli(["redact", "--root", root, "--dry-run", "--json"]);
    expect(dry.records.find((r) => r.type === "file")).toMatchObject({
      artifacts: 4,
      artifactsFound: { "github-token": 3, "aws-access-key": 1 },
    });
    expect(readFileSync(log(text.id), "utf8")).toBe(before);

    const run = await cli(["redact", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(readFileSync(log(text.id), "utf8")).toMatch(/^export GITHUB_TOKEN=\[REDACTED:[a-z-]+:[0-9a-f]{8}\]\n$/);
    expect(JSON.parse(readFileSync(log(json.id), "utf8")).env.token).toMatch(/^\[REDACTED:github-token:[0-9a-f]{8}\]$/);
    expect(readFileSync(log(raw.id), "utf8")).toBe(GH);
    expect(readFileSync(out.path, "utf8")).toMatch(/^found \[REDACTED:aws-access-key:[0-9a-f]{8}\]$/);
    const meta = JSON.parse(readFileSync(join(dir, `${text.id}.meta.json`), "utf8"));
    expect(meta.sizeBytes).toBe(statSync(log(text.id)).size);
    expect(meta.summary).not.toContain(GH);

    const again = await cli(["redact", "--root", root, "--json"]);
    expect(again.records.find((r) => r.type === "file")).toMatchObject({ artifacts: 0, artifactsFound: {} });
    // the store still reads them
    const reopened = await SessionManager.open(m.sessionFile!, { root, readOnly: true });
    expect(String(reopened.artifacts!.get(text.id))).toContain("[REDACTED:");
    await reopened.close();
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
});
