import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type RedactionCounts, SecretRedactor } from "../../src/prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../../src/prepare/secret-rules.ts";
import { redactForSharing } from "../../src/session/redact-for-sharing.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

const KEY = Buffer.alloc(32, 3);
const GH = "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";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const HEX = "9c1e7f0b3a5d4e2f8a6b0c9d1e3f5a7b";

function redactor(): SecretRedactor {
  return new SecretRedactor(BUILTIN_SECRET_RULES, () => KEY);
}

describe("issue 32 #12: a secret under an id key is redacted at any depth; structural ids stay", () => {
  it("redacts id, toolCallId, targetId… holding a secret, in tool arguments and custom data, with equal markers", () => {
    const entry = {
      type: "custom",
      id: "a1b2c3d4",
      parentId: "9f8e7d6c",
      customType: "x",
      data: { id: GH, nested: [{ toolCallId: GH, targetId: `Bearer ${GH}`, fromId: "e1" }], parentId: "0d9c8b7a" },
    };
    const counts: RedactionCounts = new Map();
    const out = redactor().redactValue(entry, counts);
    expect(JSON.stringify(out)).not.toContain(GH);
    expect(out.id).toBe("a1b2c3d4");
    expect(out.parentId).toBe("9f8e7d6c");
    expect(out.data.parentId).toBe("0d9c8b7a");
    expect(out.data.nested[0]!.fromId).toBe("e1");
    expect(out.data.id).toMatch(/^\[REDACTED:github-token:[0-9a-f]{8}\]$/);
    expect(out.data.nested[0]!.toolCallId).toBe(out.data.id);
    expect(counts.get("github-token")).toBe(3);
  });

  it("on write: a tool call whose id is a secret and its result keep their link through equal markers", async () => {
    const root = tempDir("ts-redact-ids-");
    const m = await SessionManager.create(join(root, "proj"), { root, redact: "secrets" });
    m.appendMessage({
      role: "assistant",
      content: [{ type: "toolCall", id: GH, name: "bash", arguments: { command: "ls" } }],
      api: "x",
      provider: "x",
      model: "m",
      usage: {
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "toolUse",
      timestamp: 1,
    } as never);
    m.appendMessage({
      role: "toolResult",
      toolCallId: GH,
      toolName: "bash",
      content: [{ type: "text", text: "ok" }],
      isError: false,
      timestamp: 2,
    } as never);
    m.appendCustomEntry("note", { deep: { targetId: GH } });
    const file = m.sessionFile!;
    await m.close();
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(GH);
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const call = lines.find((l) => l.message?.role === "assistant").message.content[0].id;
    const result = lines.find((l) => l.message?.role === "toolResult").message.toolCallId;
    expect(call).toMatch(/^\[REDACTED:github-token:/);
    expect(result).toBe(call);
  });

  it("in export (redactForSharing) too", () => {
    const out = redactForSharing({ type: "custom", id: "e1", data: { id: GH } }, { key: KEY });
    expect(JSON.stringify(out)).not.toContain(GH);
  });
});

describe("issue 32 #13: a secret named by an object key is redacted like the same text as JSON", () => {
  const args = {
    command: "deploy --prod",
    env: { AWS_SECRET_ACCESS_KEY: AWS_SECRET, API_KEY: HEX, tokenizer: "meta-llama/Llama-3.1-8B-Instruct" },
    password: "Secr3tPassw0rdX",
  };

  it("object-form tool arguments give the same markers as the JSON-string form", () => {
    const call = (a: unknown) => ({ type: "toolCall", id: "call_1", name: "bash", arguments: a });
    const asObject = redactor().redactValue(call(args), new Map()) as { arguments: typeof args };
    const asString = redactor().redactValue(call(JSON.stringify(args)), new Map());
    expect(JSON.stringify(asObject)).not.toContain(AWS_SECRET);
    expect(JSON.stringify(asObject)).not.toContain(HEX);
    expect(asObject.arguments).toEqual(JSON.parse(asString.arguments as string));
    expect(asObject.arguments.env.tokenizer).toBe("meta-llama/Llama-3.1-8B-Instruct");
    expect(asObject.arguments.command).toBe("deploy --prod");
  });

  it("keys that name a secret but hold a name, a number or an expression keep their value", () => {
    const value = {
      usage: { totalTokens: 12 },
      apiKey: "config.providers.openai4.defaultApiKey",
      private_key: "~/.ssh/id_ed25519_work2",
      tokenizer: "meta-llama/Llama-3.1-8B-Instruct",
      token_limit: "20000",
    };
    const counts: RedactionCounts = new Map();
    expect(redactor().redactValue(value, counts)).toBe(value);
    expect(counts.size).toBe(0);
  });

  it("the write path's prefilter looks at a keyword in a key whose value is a string", () => {
    const r = redactor();
    expect(r.mayMatchJson(`{"env":{"AWS_SECRET_ACCESS_KEY":"${AWS_SECRET.replace("/", "\\/")}"}}`)).toBe(true);
    expect(r.mayMatchJson('{"usage":{"totalTokens":12,"cacheReadTokens":3},"text":"hi"}')).toBe(false);
  });
});
