import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { bundle, SessionManager, unbundle } from "../../src/index.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { quarantineRecord } from "../../src/session/quarantine-record.ts";
import { REDACTION_KEY_FILE } from "../../src/crypto/redaction-key.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";
import { bytesOf, treeOf } from "./helpers/bundle-fixtures.ts";

const GH = "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";
const AWS = "AKIAZZZZZZZZZZZZZZZZ";
const SLACK = "xoxb-123456789012-123456789012-abcdefghijABCDEFGHIJabcd";
const SECRETS = [GH, AWS, SLACK];

/** A store written without redaction: secrets in a user message, a tool result and an artifact file. */
async function leakySession(): Promise<{ root: string; id: string; path: string }> {
  const root = tempDir();
  const m = await SessionManager.create("/proj", { root });
  m.appendMessage({ role: "user", content: `deploy with ${GH} please` });
  m.appendMessage({
    role: "assistant",
    content: [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "env" } }],
    api: "x",
    provider: "x",
    model: "x",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "toolUse",
    timestamp: 1,
  } as never);
  m.appendMessage({
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "bash",
    content: [{ type: "text", text: `AWS_ACCESS_KEY_ID=${AWS}\nHOME=/root` }],
    isError: false,
    timestamp: 2,
  } as never);
  m.artifacts!.save(`build log\nSLACK_TOKEN=${SLACK}\ndone\n`, { toolType: "bash" });
  await m.flush();
  const id = m.header.id;
  const path = m.storage.location!;
  await m.close();
  return { root, id, path };
}

/** Every member of a tar archive: name → bytes. */
async function membersOf(bytes: Buffer): Promise<Map<string, Buffer>> {
  const extract = tar.extract();
  const out = new Map<string, Buffer>();
  const done = (async () => {
    for await (const entry of extract) out.set(entry.header.name, await bytesOf(entry as AsyncIterable<Buffer>));
  })();
  extract.end(bytes);
  await done;
  return out;
}

const contentOf = (root: string) => {
  const tree = treeOf(root);
  delete tree["blobs/.referrers.jsonl"];
  delete tree["blobs/.proven"]; // the blob store's proof cache, written at each put
  return tree;
};

const MARKER = /\[REDACTED:(github-token|aws-access-key|slack-token):[0-9a-f]{8}\]/g;

describe("bundles are redacted by default", () => {
  it("quarantine records too: a secret in a record's text and in the bytes behind its base64", async () => {
    const { root, id, path } = await leakySession();
    const at = "2026-01-01T00:00:00.000Z";
    const text = quarantineRecord(path, { offset: 10, reason: "invalid JSON", bytes: Buffer.from(`{"x":"${GH}" broken`) }, at);
    const binary = quarantineRecord(
      path,
      { offset: 20, reason: "invalid UTF-8", bytes: Buffer.from(`\xff\xfe key ${AWS} end`, "latin1") },
      at,
    );
    writeFileSync(quarantinePathOf(path), text + binary);
    const bytes = await bytesOf(bundle([id], { root, onWarning: () => {} }));
    const records = (await membersOf(bytes)).get("sessions/0/quarantine.jsonl")!.toString("utf8").split("\n").filter(Boolean);
    expect(records).toHaveLength(2);
    const [a, b] = records.map((r) => JSON.parse(r) as { text?: string; base64?: string; reason: string });
    expect(a!.text).toMatch(/^\{"x":"\[REDACTED:github-token:[0-9a-f]{8}\]" broken$/);
    const raw = Buffer.from(b!.base64!, "base64").toString("latin1");
    expect(raw).toMatch(/^\xff\xfe key \[REDACTED:aws-access-key:[0-9a-f]{8}\] end$/);
    expect(b!.reason).toBe("invalid UTF-8");
    for (const secret of SECRETS) expect(bytes.includes(secret)).toBe(false);
    const into = tempDir();
    expect((await unbundle([bytes], { root: into })).sessions[0]).toMatchObject({ id, status: "created" });
  });

  it("no secret in any member (the tar's bytes), markers in lines and artifact, the manifest says so; unbundle restores it", async () => {
    const { root, id, path } = await leakySession();
    const warnings: StoreWarning[] = [];
    const bytes = await bytesOf(bundle([id], { root, onWarning: (w) => warnings.push(w) }));
    for (const secret of SECRETS) expect(bytes.includes(secret)).toBe(false);
    const members = await membersOf(bytes);
    const lines = members.get("sessions/0/lines.jsonl")!.toString("utf8");
    expect(lines.match(MARKER)?.length).toBe(2);
    const artifactName = [...members.keys()].find((n) => n.startsWith("sessions/0/artifacts/") && n.endsWith(".log"))!;
    expect(members.get(artifactName)!.toString("utf8")).toMatch(/^build log\nSLACK_TOKEN=\[REDACTED:slack-token:[0-9a-f]{8}\]\ndone\n$/);
    const manifest = JSON.parse(members.get("manifest.json")!.toString("utf8"));
    expect(manifest.redacted).toBe(true);
    // the Slack token twice: in the artifact file and in the summary its meta file keeps
    expect(manifest.redactions).toEqual({ "github-token": 1, "aws-access-key": 1, "slack-token": 2 });
    // the report: counts per rule, never a secret
    const said = warnings.filter((w) => w.code === "SECRET_REDACTED").map((w) => w.message);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("github-token×1");
    for (const secret of SECRETS) expect(said[0]).not.toContain(secret);
    // the source is untouched, and no key file was made for it
    expect(readFileSync(path, "utf8")).toContain(GH);
    expect(existsSync(join(root, REDACTION_KEY_FILE))).toBe(false);

    const into = tempDir();
    const report = await unbundle([bytes], { root: into });
    expect(report.sessions[0]).toMatchObject({ id, status: "created" });
    expect(report.redacted).toBe(true);
    const restored = readFileSync(report.sessions[0]!.location!, "utf8");
    expect(restored).toBe(lines.length > 0 ? `${members.get("sessions/0/header.jsonl")!.toString("utf8")}${lines}` : "");
    for (const secret of SECRETS) expect(restored).not.toContain(secret);
    const opened = await SessionManager.open(report.sessions[0]!.location!, { root: into, readOnly: true });
    expect(JSON.stringify(opened.getEntries())).toMatch(MARKER);
    await opened.close();
    // idempotent: the same redacted bundle again is unchanged
    expect((await unbundle([bytes], { root: into })).sessions[0]!.status).toBe("unchanged");
  });

  it("with the store's key the markers are the store's: two bundles of a session are the same bytes", async () => {
    const { root, id } = await leakySession();
    writeFileSync(join(root, REDACTION_KEY_FILE), `${"07".repeat(32)}\n`, { mode: 0o600 });
    const a = await bytesOf(bundle([id], { root, onWarning: () => {} }));
    const b = await bytesOf(bundle([id], { root, onWarning: () => {} }));
    expect(a.equals(b)).toBe(true);
    expect(a.toString("latin1").match(MARKER)?.length).toBeGreaterThan(2);
  });

  it("a redacted bundle unbundled into the store that holds the session unredacted is IMPORT_CONFLICT, nothing written", async () => {
    const { root, id } = await leakySession();
    const bytes = await bytesOf(bundle([id], { root, onWarning: () => {} }));
    const before = contentOf(root);
    await expect(unbundle([bytes], { root })).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    expect(contentOf(root)).toEqual(before);
  });

  it("redactOutput: false (--no-redact) bundles byte for byte: the secrets travel and the tree comes back identical", async () => {
    const { root, id } = await leakySession();
    const bytes = await bytesOf(bundle([id], { root, redactOutput: false }));
    for (const secret of SECRETS) expect(bytes.includes(secret)).toBe(true);
    const manifest = JSON.parse((await membersOf(bytes)).get("manifest.json")!.toString("utf8"));
    expect(manifest.redacted).toBe(false);
    expect(manifest.redactions).toBeUndefined();
    const into = tempDir();
    const report = await unbundle([bytes], { root: into });
    expect(report.redacted).toBe(false);
    expect(contentOf(into)).toEqual(contentOf(root));
  });

  it("CLI: bundle redacts and reports counts on stderr; --no-redact keeps the bytes", async () => {
    const { root, id } = await leakySession();
    const work = tempDir();
    const run = await cli(["bundle", id, "-o", join(work, "r.tar"), "--root", root]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("github-token×1");
    expect(run.stderr).toContain("--no-redact");
    for (const secret of SECRETS) {
      expect(run.stderr).not.toContain(secret);
      expect(readFileSync(join(work, "r.tar")).includes(secret)).toBe(false);
    }
    const plain = await cli(["bundle", id, "-o", join(work, "p.tar"), "--no-redact", "--root", root]);
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toContain("REDACTED");
    for (const secret of SECRETS) expect(readFileSync(join(work, "p.tar")).includes(secret)).toBe(true);
    const into = tempDir();
    expect((await cli(["unbundle", join(work, "p.tar"), "--root", into])).code).toBe(0);
    expect(contentOf(into)).toEqual(contentOf(root));
  });
});
