import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { SessionManager } from "../../src/index.ts";
import { exportForeign, foreignLineBytes, type ForeignExportLine } from "../../src/interchange/export-foreign.ts";
import type { InterchangeFormat } from "../../src/interchange/foreign-entry.ts";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { redactForSharing } from "../../src/session/redact-for-sharing.ts";
import { loadRedactionKey } from "../../src/crypto/redaction-key.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/foreign");

/** Secrets planted in the fixtures, by the rule that finds each. */
const GH = "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";
const AWS = "AKIAQYLPMN5HHHFPZAM2";
const PG_PASSWORD = "s3cr3t-Hunter2-pass";
const STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
const SECRETS = [GH, AWS, PG_PASSWORD, STRIPE];
const PG_URL = `postgres://app:${PG_PASSWORD}@db.internal:5432/shop`;

type Rec = Record<string, any>;

/** A store that has its redaction key (as after a redacted write): exports must use that key's markers. */
function keyedStore(): string {
  const root = tempDir("ts-fredact-");
  loadRedactionKey(root);
  return root;
}

function recordsOf(text: string): Rec[] {
  return text
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

/** The Claude Code fixture with a secret in the prompt, the thinking, a tool input and a tool result. */
function claudeCodeWithSecrets(dir: string): string {
  const records = recordsOf(readFileSync(join(FIXTURES, "claude-code/synthetic-v1.0.83-images.jsonl"), "utf8"));
  records[1]!.message.content[0].text += ` my token is ${GH}`;
  records[2]!.message.content[0].thinking += ` the key ${STRIPE} is live`;
  records[2]!.message.content[1].input.command = `psql ${PG_URL}`;
  records[3]!.message.content[0].content += `\nconst key = "${AWS}";`;
  records[3]!.toolUseResult = { stdout: `AWS key ${AWS}`, stderr: "" };
  const path = join(dir, "with-secrets.jsonl");
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return path;
}

/** The Codex fixture with a secret in the prompt (item and event), a tool call's arguments and its output. */
function codexWithSecrets(dir: string): string {
  const records = recordsOf(readFileSync(join(FIXTURES, "codex/synthetic-v0.116.0-compacted-image.jsonl"), "utf8"));
  records[2]!.payload.content[0].text += ` my token is ${GH}`;
  records[3]!.payload.message += ` my token is ${GH}`;
  records[4]!.payload.arguments = JSON.stringify({ command: ["psql", PG_URL] });
  records[5]!.payload.output += `\nconst key = "${AWS}"; // ${STRIPE}`;
  const path = join(dir, "with-secrets.jsonl");
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return path;
}

const PLANTED: Record<InterchangeFormat, (dir: string) => string> = { "claude-code": claudeCodeWithSecrets, codex: codexWithSecrets };

async function exported(format: InterchangeFormat, id: string, options: Parameters<typeof exportForeign>[2]) {
  const lines: ForeignExportLine[] = [];
  const gen = exportForeign(format, id, options);
  let step = await gen.next();
  while (step.done !== true) {
    lines.push(step.value);
    step = await gen.next();
  }
  return { lines, text: Buffer.concat(lines.map(foreignLineBytes)).toString("utf8"), summary: step.value };
}

/** `text` with each planted secret replaced by the marker the store's key gives it. */
function withMarkers(text: string, root: string): string {
  let out = text.replaceAll(PG_URL, redactForSharing(PG_URL, { root }));
  for (const s of [GH, AWS, STRIPE]) out = out.replaceAll(s, redactForSharing(s, { root }));
  return out;
}

function expectRuleCountsOnly(warnings: StoreWarning[]): StoreWarning[] {
  const redacted = warnings.filter((w) => w.code === "SECRET_REDACTED");
  expect(redacted).toHaveLength(1);
  for (const s of SECRETS) expect(JSON.stringify(warnings)).not.toContain(s);
  return redacted;
}

for (const format of ["claude-code", "codex"] as const) {
  describe(`export --to ${format} redacts by default`, () => {
    it("the source records of an imported session: no secret, the markers, everything else (ids, images, signatures) equal", async () => {
      const root = keyedStore();
      const source = PLANTED[format](tempDir("ts-fredact-src-"));
      const originals = readFileSync(source, "utf8");
      for (const s of SECRETS) expect(originals).toContain(s);
      const report = await importForeignFile(format, source, { root });
      expect(report.status).toBe("created");

      const warnings: StoreWarning[] = [];
      const out = await exported(format, report.id, { root, onWarning: (w) => warnings.push(w) });
      for (const s of SECRETS) expect(out.text).not.toContain(s);
      expect(out.text).toMatch(/\[REDACTED:github-token:[0-9a-f]{8}\]/);
      expect(out.text).toMatch(/\[REDACTED:aws-access-key:[0-9a-f]{8}\]/);
      expect(out.text).toMatch(/\[REDACTED:url-password:[0-9a-f]{8}\]/);
      expect(out.text).toMatch(/\[REDACTED:stripe-key:[0-9a-f]{8}\]/);
      // exactly the secrets changed: each record equals its original with the store's markers put in
      expect(recordsOf(out.text)).toEqual(recordsOf(withMarkers(originals, root)));
      const [warning] = expectRuleCountsOnly(warnings);
      expect(warning!.message).toMatch(/github-token×\d/);
      expect(warning!.message).toContain("aws-access-key×");

      // opting out gives the source back, equal as JSON values
      const plain = await exported(format, report.id, { root, redactOutput: false });
      expect(recordsOf(plain.text)).toEqual(recordsOf(originals));
    });

    it("a native session converted to it: no secret, the markers", async () => {
      const root = keyedStore();
      const m = await SessionManager.create(join(root, "proj"), { root });
      m.appendMessage({ role: "user", content: `deploy with ${GH}`, timestamp: 1 });
      m.appendMessage({
        role: "assistant",
        provider: "anthropic",
        model: "claude-test-1",
        content: [
          { type: "thinking", thinking: `use ${STRIPE}`, thinkingSignature: "sig-1" },
          { type: "toolCall", id: "call_1", name: "bash", arguments: { command: `psql ${PG_URL}` } },
        ],
        stopReason: "toolUse",
        timestamp: 2,
      } as never);
      m.appendMessage({
        role: "toolResult",
        toolCallId: "call_1",
        toolName: "bash",
        content: [{ type: "text", text: AWS }],
        timestamp: 3,
      } as never);
      await m.close();
      const warnings: StoreWarning[] = [];
      const out = await exported(format, m.sessionId, { root, onWarning: (w) => warnings.push(w) });
      expect(out.summary.converted).toBe(true);
      for (const s of SECRETS) expect(out.text).not.toContain(s);
      for (const rule of ["github-token", "aws-access-key", "url-password"])
        expect(out.text).toMatch(new RegExp(`\\[REDACTED:${rule}:[0-9a-f]{8}\\]`));
      expect(out.text).toContain(redactForSharing(GH, { root }));
      expect(out.text).toContain("call_1");
      expectRuleCountsOnly(warnings);

      const plain = await exported(format, m.sessionId, { root, redactOutput: false });
      for (const s of [GH, AWS, PG_PASSWORD]) expect(plain.text).toContain(s);
    });
  });
}

it("a Claude Code import converted to Codex is redacted too", async () => {
  const root = keyedStore();
  const report = await importForeignFile("claude-code", claudeCodeWithSecrets(tempDir("ts-fredact-src-")), { root });
  const out = await exported("codex", report.id, { root });
  expect(out.summary.converted).toBe(true);
  for (const s of SECRETS) expect(out.text).not.toContain(s);
  expect(out.text).toContain(redactForSharing(GH, { root }));
});

it("CLI: export --to claude-code redacts and reports rule counts on stderr; --no-redact gives the source back", async () => {
  const root = keyedStore();
  const source = claudeCodeWithSecrets(tempDir("ts-fredact-src-"));
  const imported = await cli(["--root", root, "import", "--from", "claude-code", source, "--json"]);
  const id = imported.records[0]!.id as string;
  const out = await cli(["--root", root, "export", id, "--to", "claude-code"]);
  expect(out.code).toBe(0);
  for (const s of SECRETS) {
    expect(out.stdout).not.toContain(s);
    expect(out.stderr).not.toContain(s);
  }
  expect(out.stdout).toContain(redactForSharing(GH, { root }));
  expect(out.stderr).toMatch(/redacted .*github-token×\d.*; --no-redact keeps them/);
  const plain = await cli(["--root", root, "export", id, "--to", "claude-code", "--no-redact"]);
  expect(plain.code).toBe(0);
  expect(recordsOf(plain.stdout)).toEqual(recordsOf(readFileSync(source, "utf8")));
  expect(plain.stderr).not.toContain("redacted");
});

it("a Codex tool call's JSON arguments stay JSON when a secret sits next to an escaped quote", async () => {
  const root = keyedStore();
  const dir = tempDir("ts-fredact-src-");
  const records = recordsOf(readFileSync(join(FIXTURES, "codex/synthetic-v0.116.0-compacted-image.jsonl"), "utf8"));
  // the password runs up to the backslash of `\"`: redacting the JSON text as text would eat the escape
  records[4]!.payload.arguments = JSON.stringify({ command: 'psql "password=Tr0ub4dor&3x"' });
  const source = join(dir, "quoted.jsonl");
  writeFileSync(source, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  const report = await importForeignFile("codex", source, { root });
  const out = await exported("codex", report.id, { root });
  expect(out.text).not.toContain("Tr0ub4dor");
  const call = recordsOf(out.text)[4]!.payload;
  expect(call.call_id).toBe("call_A");
  expect(JSON.parse(call.arguments)).toEqual({
    command: `psql "password=${redactForSharing("password=Tr0ub4dor&3x", { root }).slice(9)}"`,
  });
});

it("a damaged line's bytes are redacted as well; --no-redact gives them back byte for byte", async () => {
  const root = keyedStore();
  const dir = tempDir("ts-fredact-src-");
  const good = readFileSync(join(FIXTURES, "claude-code/synthetic-v1.0.83-images.jsonl"), "utf8");
  const torn = `{"type":"user","message":{"content":"token ${GH} and \u00e9`;
  const source = join(dir, "torn.jsonl");
  writeFileSync(source, good + torn);
  const report = await importForeignFile("claude-code", source, { root });
  expect(report.counts.damaged).toBe(1);
  const out = await exported("claude-code", report.id, { root });
  const last = out.lines.at(-1)!;
  expect("raw" in last).toBe(true);
  const raw = foreignLineBytes(last).toString("utf8");
  expect(raw).toBe(torn.replace(GH, redactForSharing(GH, { root })));
  const plain = await exported("claude-code", report.id, { root, redactOutput: false });
  expect(foreignLineBytes(plain.lines.at(-1)!).toString("utf8")).toBe(torn);
  expect(plain.lines.slice(0, -1).map((l) => ("record" in l ? l.record : null))).toEqual(recordsOf(good));
});

it("redactOutput names a key or rules of its own; a bad rule is INVALID_OPTION before any line", async () => {
  const root = keyedStore();
  const report = await importForeignFile("claude-code", claudeCodeWithSecrets(tempDir("ts-fredact-src-")), { root });
  const key = new Uint8Array(32).fill(7);
  const own = await exported("claude-code", report.id, { root, redactOutput: { key } });
  expect(own.text).toContain(redactForSharing(GH, { key }));
  expect(own.text).not.toContain(redactForSharing(GH, { root }));
  const acme = await exported("claude-code", report.id, {
    root,
    redactOutput: { redact: { builtin: false, rules: [{ id: "cart", pattern: /cart\.js/ }] } },
  });
  expect(acme.text).toContain(GH); // only the given rule runs
  expect(acme.text).not.toContain("cart.js");
  expect(acme.text).toMatch(/\[REDACTED:cart:[0-9a-f]{8}\]/);
  const lines: ForeignExportLine[] = [];
  const bad = (async () => {
    for await (const l of exportForeign("claude-code", report.id, {
      root,
      redactOutput: { redact: { rules: [{ id: "BAD", pattern: /x/ }] } },
    }))
      lines.push(l);
  })();
  await expectCode(bad, "INVALID_OPTION");
  expect(lines).toEqual([]);
});

it("the NDJSON export and a redacted write keep an imported Codex call's JSON arguments JSON", async () => {
  const root = keyedStore();
  const dir = tempDir("ts-fredact-src-");
  const records = recordsOf(readFileSync(join(FIXTURES, "codex/synthetic-v0.116.0-compacted-image.jsonl"), "utf8"));
  records[4]!.payload.arguments = JSON.stringify({ command: 'psql "password=Tr0ub4dor&3x"' });
  const source = join(dir, "quoted.jsonl");
  writeFileSync(source, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  const report = await importForeignFile("codex", source, { root });
  const out = await cli(["--root", root, "export", report.id]);
  expect(out.code).toBe(0);
  expect(out.stdout).not.toContain("Tr0ub4dor");
  const call = recordsOf(out.stdout).find((e) => e.foreign?.record?.payload?.type === "function_call")!;
  expect(JSON.parse(call.foreign.record.payload.arguments)).toEqual({ command: expect.stringMatching(/^psql "password=\[REDACTED:/) });

  // the same record written by a session that redacts on write
  const m = await SessionManager.create(join(root, "proj"), { root, redact: "secrets" });
  m.appendCustomEntry("codex:kept", { record: records[4] });
  const stored = readFileSync(m.sessionFile!, "utf8");
  await m.close();
  expect(stored).not.toContain("Tr0ub4dor");
  const kept = recordsOf(stored).find((e) => e.type === "custom")!;
  expect(JSON.parse(kept.data.record.payload.arguments)).toEqual({ command: expect.stringMatching(/^psql "password=\[REDACTED:/) });
});

it("an id holding a secret is redacted like any string (Codex call_id, Claude Code requestId); call and output stay linked", async () => {
  const root = keyedStore();
  const dir = tempDir("ts-fredact-src-");
  const cx = recordsOf(readFileSync(join(FIXTURES, "codex/synthetic-v0.116.0-compacted-image.jsonl"), "utf8"));
  cx[4]!.payload.call_id = GH;
  cx[5]!.payload.call_id = GH;
  cx[5]!.payload.output += ` ${GH}`;
  const cxPath = join(dir, "ids.jsonl");
  writeFileSync(cxPath, cx.map((r) => `${JSON.stringify(r)}\n`).join(""));
  const cxText = (await exported("codex", (await importForeignFile("codex", cxPath, { root })).id, { root })).text;
  expect(cxText).not.toContain(GH);
  const cxOut = recordsOf(cxText);
  expect(cxOut[4]!.payload.call_id).toMatch(/^\[REDACTED:github-token:[0-9a-f]{8}\]$/);
  expect(cxOut[5]!.payload.call_id).toBe(cxOut[4]!.payload.call_id);
  expect(cxOut[5]!.payload.output).not.toContain(GH);

  const cc = recordsOf(readFileSync(join(FIXTURES, "claude-code/synthetic-v1.0.83-images.jsonl"), "utf8"));
  cc[2]!.requestId = STRIPE;
  const ccPath = join(dir, "ids-cc.jsonl");
  writeFileSync(ccPath, cc.map((r) => `${JSON.stringify(r)}\n`).join(""));
  const ccOut = recordsOf((await exported("claude-code", (await importForeignFile("claude-code", ccPath, { root })).id, { root })).text);
  expect(ccOut[2]!.requestId).toMatch(/^\[REDACTED:stripe-key:[0-9a-f]{8}\]$/);
  // every structural id (uuids, session ids, tool_use ids) is kept as it was
  expect(ccOut.map((r) => ({ ...r, requestId: undefined }))).toEqual(cc.map((r) => ({ ...r, requestId: undefined })));
});
