import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { emptyByteKinds, totalOf } from "../../src/accounting/line-kinds.ts";
import { SessionAccountant } from "../../src/accounting/session-account.ts";
import { LineSplitter } from "../../src/format/line-splitter.ts";

/** The pieces of a constructed session, each the exact text it has in the line. */
const header = JSON.stringify({ type: "session", version: 3, id: "s-one", timestamp: "2025-06-01T09:00:00.000Z", cwd: "/p" });
const userText = '"héllo wörld"'; // non-ASCII: bytes, not characters
const thinking = '{"type":"thinking","thinking":"let me see","thinkingSignature":"sig"}';
const text = '{"type":"text","text":"done"}';
const toolCall = '{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"ls"}}';
const payload = "iVBORw0KGgo".repeat(200);
const resultText = '{"type":"text","text":"a.txt\\nb.txt"}';
const image = `{"type":"image","data":"${payload}","mimeType":"image/png"}`;
const usage =
  '{"input":10,"output":5,"cacheRead":100,"cacheWrite":7,"totalTokens":122,"cost":{"input":0.1,' +
  '"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.33}}';
const lines = [
  header,
  `{"type":"message","id":"u1","parentId":null,"timestamp":"2025-06-01T09:00:01.000Z","message":{"role":"user","content":${userText}}}`,
  `{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-06-01T09:00:02.000Z",` +
    `"message":{"role":"assistant","content":[${thinking},${text},${toolCall}],"provider":"anthropic",` +
    `"model":"claude-x","usage":${usage}}}`,
  `{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-06-01T09:00:03.000Z",` +
    `"message":{"role":"toolResult","toolCallId":"t1","content":[${resultText},${image}]}}`,
  "not json at all",
  `{"type":"model_change","id":"m1","parentId":"r1","timestamp":"2025-06-01T09:00:04.000Z","provider":"openai","modelId":"gpt-y"}`,
];
const file = Buffer.from(`${lines.join("\n")}\n`, "utf8");
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

function account(data: Buffer, chunk: number) {
  const accountant = new SessionAccountant();
  const splitter = new LineSplitter((line) => accountant.addLine(line));
  for (let at = 0; at < data.length; at += chunk) splitter.push(data.subarray(at, at + chunk));
  splitter.end();
  return accountant.result();
}

describe("SessionAccountant", () => {
  it("places every byte of a constructed session in exactly one kind (the kinds add up to the file)", () => {
    const a = account(file, 1 << 20);
    expect(a.bytes).toBe(file.length);
    expect(totalOf(a.kinds)).toBe(file.length);
    const imageBytes = payload.length + 2; // the quoted base64 string
    expect(a.kinds).toEqual({
      ...emptyByteKinds(),
      text: bytes(userText) + bytes(text),
      thinking: bytes(thinking),
      toolCalls: bytes(toolCall),
      toolResults: bytes(resultText) + bytes(image) - imageBytes,
      inlineImages: imageBytes,
      malformed: bytes("not json at all") + 1,
      other: expect.any(Number),
    });
    const placed = a.kinds.text + a.kinds.thinking + a.kinds.toolCalls + a.kinds.toolResults + a.kinds.inlineImages + a.kinds.malformed;
    expect(a.kinds.other).toBe(file.length - placed);
    expect(a.sessionId).toBe("s-one");
    expect(a.cwd).toBe("/p");
    expect(a.lines).toBe(6);
  });

  it("accounts every fixture (legacy, BOM, title slot, torn tail, image shapes, garbage) to its exact size", () => {
    const dir = join(import.meta.dirname, "../../fixtures/sessions");
    const names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) {
      const data = readFileSync(join(dir, name));
      const a = account(data, 4096);
      expect(totalOf(a.kinds), name).toBe(data.length);
      if (name.includes("image-shapes")) {
        // every payload of the shapes (pi/omp `data`, data URLs, Anthropic's `source`), quoted
        const payloads = data.toString("utf8").match(/"(data:image|iVBOR)[^"]*"/g)!;
        expect(payloads.length, name).toBe(5);
        expect(a.kinds.inlineImages, name).toBe(payloads.reduce((n, p) => n + p.length, 0));
      }
      if (name.includes("with-images")) expect(a.kinds.inlineImages, name).toBeGreaterThan(0);
      const damaged = name.includes("malformed") || name.includes("torn") || name.includes("garbage");
      if (damaged) expect(a.kinds.malformed, name).toBeGreaterThan(0);
    }
  });

  it("gives the same account however the stream is cut (fed line by line, 7-byte chunks, one chunk)", () => {
    const whole = account(file, file.length);
    expect(account(file, 7)).toEqual(whole);
    expect(account(file, 1)).toEqual(whole);
  });

  it("resumes from a JSON state saved mid-stream: catching up on the rest gives the account of the whole", () => {
    const whole = account(file, 1 << 20);
    const cut = file.indexOf("\n", file.indexOf("toolCall")) + 1; // after the assistant line
    const first = new SessionAccountant();
    new LineSplitter((line) => first.addLine(line)).push(file.subarray(0, cut));
    const saved = JSON.parse(JSON.stringify(first.state()));
    const resumed = SessionAccountant.resume(saved);
    const rest = new LineSplitter((line) => resumed.addLine({ ...line, lineNumber: line.lineNumber + first.result().lines }));
    rest.push(file.subarray(cut));
    rest.end();
    expect(resumed.result()).toEqual(whole);
    expect(first.result().lines).toBe(3);
  });

  it("reads one usage row per model call, with its model, and follows model_change for rows that name none", () => {
    const usageEntry =
      `{"type":"usage","id":"g1","parentId":"m1","timestamp":"2025-06-02T00:00:00.000Z",` +
      `"kind":"cache_warm","usage":{"input":3,"output":0,"cacheRead":0,"cacheWrite":9,"cost":{"input":0.5,` +
      `"output":0,"cacheRead":0,"cacheWrite":0.25}}}`;
    const a = account(Buffer.from(`${lines.join("\n")}\n${usageEntry}\n`), 64);
    expect(a.usage).toEqual([
      {
        sessionId: "s-one",
        cwd: "/p",
        key: "a1",
        timestamp: "2025-06-01T09:00:02.000Z",
        provider: "anthropic",
        model: "claude-x",
        source: "message",
        kind: null,
        tokens: { input: 10, output: 5, cacheRead: 100, cacheWrite: 7, totalTokens: 122 },
        cost: { input: 0.1, output: 0.2, cacheRead: 0.01, cacheWrite: 0.02, total: 0.33 },
      },
      {
        sessionId: "s-one",
        cwd: "/p",
        key: "g1",
        timestamp: "2025-06-02T00:00:00.000Z",
        provider: "openai",
        model: "gpt-y",
        source: "usage",
        kind: "cache_warm",
        // absent totals are the sums of their parts (pi's definition)
        tokens: { input: 3, output: 0, cacheRead: 0, cacheWrite: 9, totalTokens: 12 },
        cost: { input: 0.5, output: 0, cacheRead: 0, cacheWrite: 0.25, total: 0.75 },
      },
    ]);
    expect(a.usageProblems).toEqual([]);
  });

  it("reports malformed usage values with their entry and field, counts them 0, and goes on", () => {
    const bad = [
      header,
      `{"type":"message","id":"a1","parentId":null,"timestamp":"2025-06-01T00:00:00.000Z",` +
        `"message":{"role":"assistant","content":[],"usage":{"input":"12","output":-3,"cacheRead":5,` +
        `"cacheWrite":0,"cost":{"total":"NaN"}}}}`,
      `{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-06-01T00:00:01.000Z",` +
        `"message":{"role":"assistant","content":[],"usage":"lots"}}`,
      `{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-06-01T00:00:02.000Z",` +
        `"message":{"role":"assistant","content":[],"usage":{"input":1,"output":2,"cost":[1]}}}`,
    ];
    const a = account(Buffer.from(`${bad.join("\n")}\n`), 1 << 16);
    expect(a.usage.map((r) => [r.key, r.tokens, r.cost.total])).toEqual([
      ["a1", { input: 0, output: 0, cacheRead: 5, cacheWrite: 0, totalTokens: 5 }, 0],
      ["a3", { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3 }, 0],
    ]);
    expect(a.usageProblems.map((p) => [p.key, p.line, p.field])).toEqual([
      ["a1", 2, "message.usage.input"],
      ["a1", 2, "message.usage.output"],
      ["a1", 2, "message.usage.cost.total"],
      ["a2", 3, "message.usage"],
      ["a3", 4, "message.usage.cost"],
    ]);
  });

  it("counts a line too long to hold as oversized, whole, from its length alone", () => {
    const accountant = new SessionAccountant();
    const splitter = new LineSplitter((line) => accountant.addLine(line), { maxLineBytes: 100, keepBytes: 10 });
    const long = `{"type":"message","id":"x","message":{"role":"user","content":"${"z".repeat(500)}"}}`;
    splitter.push(Buffer.from(`${header}\n${long}\n`));
    splitter.end();
    const a = accountant.result();
    expect(a.kinds.oversized).toBe(bytes(long) + 1);
    expect(totalOf(a.kinds)).toBe(bytes(header) + 1 + bytes(long) + 1);
  });

  it("collects the blob refs of every line, each once, and counts a ref as no image bytes", () => {
    const h = "ab".repeat(32);
    const ref =
      `{"type":"message","id":"u2","parentId":null,"timestamp":"2025-06-01T00:00:00.000Z",` +
      `"message":{"role":"user","content":[{"type":"image","data":"blob:sha256:${h}",` +
      `"mimeType":"image/png"}]}}`;
    const a = account(Buffer.from(`${header}\n${ref}\n${ref.replace("u2", "u3")}`), 1 << 16);
    expect([...a.blobRefs]).toEqual([h]);
    expect(a.kinds.inlineImages).toBe(0);
    expect(totalOf(a.kinds)).toBe(bytes(header) + 1 + 2 * bytes(ref) + 1); // the last line has no newline
  });
});
