import { describe, expect, it } from "vitest";
import { createHmac } from "node:crypto";
import {
  REDACTION_MARKER_PREFIX,
  redactSecretsStage,
  resolveRedactRules,
  SecretRedactor,
  type RedactionCounts,
} from "../../src/prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../../src/prepare/secret-rules.ts";
import { codeOf } from "../support/error-code.ts";
import type { SessionEntry } from "../../src/format/types.ts";

const KEY = Buffer.alloc(32, 1);
const GH = "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";
const AWS = "AKIAZZZZZZZZZZZZZZZZ";

function redactor(key: Uint8Array = KEY): SecretRedactor {
  return new SecretRedactor(BUILTIN_SECRET_RULES, () => key);
}

describe("SecretRedactor", () => {
  it("replaces a secret by a marker naming the rule and the first 8 hex of HMAC-SHA256(key, secret)", () => {
    const counts: RedactionCounts = new Map();
    const out = redactor().redactText(`token ${GH} here`, counts);
    const hash = createHmac("sha256", KEY).update(GH).digest("hex").slice(0, 8);
    expect(out).toBe(`token [REDACTED:github-token:${hash}] here`);
    expect([...counts]).toEqual([["github-token", 1]]);
  });

  it("gives equal secrets equal markers, other keys other markers, and keeps the context of a capture group", () => {
    const counts: RedactionCounts = new Map();
    const a = redactor().redactText(`${GH} and ${GH}`, counts);
    const [m1, m2] = a.split(" and ");
    expect(m1).toBe(m2);
    expect(counts.get("github-token")).toBe(2);
    expect(redactor(Buffer.alloc(32, 2)).redactText(GH, new Map())).not.toBe(m1);
    const url = redactor().redactText("postgres://app:Xk29fLq83mZ@db.internal:5432/app", new Map());
    expect(url).toMatch(/^postgres:\/\/app:\[REDACTED:url-password:[0-9a-f]{8}\]@db\.internal:5432\/app$/);
  });

  it("is idempotent: a redacted text has nothing left to find", () => {
    const text = `AWS ${AWS} gh ${GH} url https://svc:9hT4qLw2ZpX7@h.example.com API_KEY=9c1e7f0b3a5d4e2f8a6b0c9d1e3f5a7b`;
    const once = redactor().redactText(text, new Map());
    expect(once).not.toContain(AWS);
    const counts: RedactionCounts = new Map();
    expect(redactor().redactText(once, counts)).toBe(once);
    expect(counts.size).toBe(0);
  });

  it("never touches structural ids, object keys, blob refs, image payloads or signatures, and returns the same object when clean", () => {
    const entry = {
      type: "message",
      id: "a1b2c3d4",
      parentId: null,
      toolCallId: "call_01ABCdef",
      [GH]: "key kept",
      message: {
        role: "user",
        content: [
          { type: "text", text: `use ${GH}` },
          { type: "image", data: `blob:sha256:${"a".repeat(64)}`, mimeType: "image/png" },
          { type: "thinking", thinking: "x", thinkingSignature: GH },
        ],
      },
    };
    const counts: RedactionCounts = new Map();
    const out = redactor().redactValue(entry, counts) as typeof entry;
    expect(out.id).toBe("a1b2c3d4");
    expect(out.toolCallId).toBe("call_01ABCdef");
    expect(out[GH]).toBe("key kept");
    expect(out.message.content[0]).toEqual({ type: "text", text: expect.stringMatching(/^use \[REDACTED:github-token:/) });
    expect(out.message.content[1]).toBe(entry.message.content[1]);
    expect(out.message.content[2]).toBe(entry.message.content[2]);
    expect(entry.message.content[0]!.text).toBe(`use ${GH}`); // input not mutated
    const clean = { type: "message", id: "1", message: { role: "user", content: "nothing" } };
    expect(redactor().redactValue(clean, new Map())).toBe(clean);
  });

  it("finds a rule whose keyword is hidden inside another keyword's hit (password= holds passw)", () => {
    const counts: RedactionCounts = new Map();
    // "password=" selects connection-string-password, whose check keeps this value; secret-assignment ("passw") takes it.
    const out = redactor().redactText("db_password=ZhsM3c9vyx2Q7pLwT4aNx8", counts);
    expect(out).toMatch(/^db_password=\[REDACTED:[a-z-]+:[0-9a-f]{8}\]$/);
    expect(counts.size).toBe(1);
  });

  it("mayMatchJson ignores keywords found only in object keys, and counts them in values (escaped quotes too)", () => {
    const r = redactor();
    expect(r.mayMatchJson('{"usage":{"totalTokens":12,"cacheReadTokens":3},"text":"hi"}')).toBe(false);
    expect(r.mayMatchJson('{"text":"my token is here"}')).toBe(true);
    expect(r.mayMatchJson('{"text":"say \\"token\\": x"}')).toBe(true);
    expect(r.mayMatch('{"totalTokens":1}')).toBe(true);
  });

  it("redacts a value under a key that merely ends in Id (accessKeyId), only the format's id keys are kept", () => {
    const entry = {
      type: "message",
      id: "e1",
      message: {
        role: "assistant",
        content: [{ type: "toolCall", id: "call_1", arguments: { accessKeyId: AWS, clientId: GH, signature: GH } }],
      },
    };
    const counts: RedactionCounts = new Map();
    const out = redactor().redactValue(entry, counts);
    const args = out.message.content[0]!.arguments;
    expect(args.accessKeyId).toMatch(/^\[REDACTED:aws-access-key:[0-9a-f]{8}\]$/);
    expect(args.clientId).toMatch(/^\[REDACTED:github-token:[0-9a-f]{8}\]$/);
    expect(args.signature).toBe(args.clientId);
    expect(out.message.content[0]!.id).toBe("call_1");
  });

  it("keeps only well-formed blob refs: text that merely starts like one is scanned", () => {
    const ref = `blob:sha256:${"a".repeat(64)}`;
    const counts: RedactionCounts = new Map();
    const out = redactor().redactValue({ a: ref, b: `blob:sha256: see ${GH}` }, counts);
    expect(out.a).toBe(ref);
    expect(out.b).toMatch(/^blob:sha256: see \[REDACTED:github-token:[0-9a-f]{8}\]$/);
  });

  it("asks for the key only when a secret is found", () => {
    let asked = 0;
    const r = new SecretRedactor(BUILTIN_SECRET_RULES, () => {
      asked++;
      return KEY;
    });
    r.redactText("a token count of 12 and a password field", new Map());
    expect(asked).toBe(0);
    r.redactText(GH, new Map());
    expect(asked).toBe(1);
  });

  it("as a stage: needed() is the keyword prefilter, and each changed entry is reported with counts only", () => {
    const reports: Array<[string, string]> = [];
    const stage = redactSecretsStage(redactor(), (e, counts) => reports.push([String(e.id), JSON.stringify([...counts])]));
    expect(stage.needed!('{"content":"hello world"}')).toBe(false);
    expect(stage.needed!(`{"content":"${GH}"}`)).toBe(true);
    const entry = { type: "message", id: "e1", parentId: null, timestamp: "t", message: { role: "user", content: GH } } as SessionEntry;
    stage(entry);
    expect(reports).toEqual([["e1", '[["github-token",1]]']]);
    expect(reports[0]!.join()).not.toContain(GH);
  });
});

describe("resolveRedactRules", () => {
  it("adds user rules (string or RegExp, capture group = the secret) and may drop the built-in ones", () => {
    const rules = resolveRedactRules({ builtin: false, rules: [{ id: "acme", pattern: "acme_key=(\\w{8})", keywords: ["acme_"] }] });
    expect(rules.map((r) => r.id)).toEqual(["acme"]);
    const r = new SecretRedactor(rules, () => KEY);
    const counts: RedactionCounts = new Map();
    expect(r.redactText(`acme_key=abcd1234 ${GH}`, counts)).toMatch(/^acme_key=\[REDACTED:acme:[0-9a-f]{8}\] ghp_/);
    expect(resolveRedactRules({ rules: [{ id: "acme", pattern: /acme-\d+/ }] }).length).toBe(BUILTIN_SECRET_RULES.length + 1);
    expect(REDACTION_MARKER_PREFIX).toBe("[REDACTED:");
  });

  it("refuses bad options with INVALID_OPTION", () => {
    expect(codeOf(() => resolveRedactRules("all" as never))).toBe("INVALID_OPTION");
    expect(codeOf(() => resolveRedactRules({ rules: [{ id: "Bad Id", pattern: "x" }] }))).toBe("INVALID_OPTION");
    expect(codeOf(() => resolveRedactRules({ rules: [{ id: "x", pattern: "(" }] }))).toBe("INVALID_OPTION");
    expect(codeOf(() => resolveRedactRules({ rules: [{ id: "x", pattern: "" }] }))).toBe("INVALID_OPTION");
    expect(codeOf(() => resolveRedactRules({ rules: [{ id: "jwt", pattern: "x" }] }))).toBe("INVALID_OPTION");
    expect(codeOf(() => resolveRedactRules({ rules: [{ id: "x", pattern: "x", keywords: [""] }] }))).toBe("INVALID_OPTION");
  });
});
