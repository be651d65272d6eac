import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateAtif } from "../../src/interchange/atif-validate.ts";
import { exportSession } from "../../src/interchange/export-session.ts";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/foreign");

/** A usage report of `root` by `by` (`--json`): the groups and the total. */
async function usage(root: string, by: string, extra: string[] = []) {
  const out = await cli(["usage", "--root", root, "--by", by, "--json", ...extra]);
  expect(out.code).toBe(0);
  return { groups: out.records.filter((r) => r.type === "usage"), total: out.records.find((r) => r.type === "total")!, out };
}

describe("usage of sessions imported from other agents", () => {
  it("Codex: each token_count event of a new call is a usage row (last_token_usage; cached input as cache reads)", async () => {
    const root = tempDir();
    await importForeignFile("codex", join(FIXTURES, "codex/v0.129.0-turn-2.jsonl"), { root });
    const { groups, total } = await usage(root, "model");
    expect(groups.map((g) => [g.key, g.calls])).toEqual([["openai/o4-mini", 2]]);
    // 1024 + 1100 input tokens of which 512 + 512 cached; 12 + 20 output (reasoning included)
    expect(total.tokens).toEqual({ input: 512 + 588, output: 32, cacheRead: 1024, cacheWrite: 0, totalTokens: 1036 + 1120 });
  });

  it("Codex: a repeated token_count (the cumulative total did not move) is not a second call", async () => {
    const root = tempDir();
    // real 0.104 rollout: 11 token_count events with a total, 6 distinct totals
    await importForeignFile("codex", join(FIXTURES, "codex/v0.104.0-alpha.1-redacted-mcp-019c8bfe.jsonl"), { root });
    const { total } = await usage(root, "session");
    expect(total.calls).toBe(6);
    expect(total.tokens.input + total.tokens.cacheRead).toBe(298373);
    expect(total.tokens.output).toBe(1123);
  });

  it("Claude Code: calls are priced from the shipped price table, never $0; a model it does not know is unpriced", async () => {
    const root = tempDir();
    await importForeignFile("claude-code", join(FIXTURES, "claude-code/v2.1.39-trimmed-258c7280.jsonl"), { root });
    const { groups, total, out } = await usage(root, "model");
    expect(groups.map((g) => g.key)).toEqual(["anthropic/claude-opus-4-6"]);
    const t = total.tokens;
    // claude-opus-4-6: $5 / $25 / $0.50 / $6.25 per million input / output / cache read / cache write tokens
    const expected = (t.input * 5 + t.output * 25 + t.cacheRead * 0.5 + t.cacheWrite * 6.25) / 1e6;
    expect(total.cost.total).toBeGreaterThan(0);
    expect(total.cost.total).toBeCloseTo(expected, 10);
    expect(total.unpricedCalls).toBe(0);
    expect(out.stdout).not.toMatch(/"total":0[,}]/);

    // an override file prices what it names; a model no table knows stays unpriced (shown as such, never $0)
    const prices = join(tempDir(), "prices.json");
    writeFileSync(prices, JSON.stringify({ date: "2026-11-01", models: { "claude-opus-4-6": { input: 1, output: 2 } } }));
    const over = await usage(root, "model", ["--prices", prices]);
    expect(over.total.cost.total).toBeCloseTo((t.input * 1 + t.output * 2) / 1e6, 10);

    const unknown = join(tempDir(), "unknown.jsonl");
    const rec = {
      type: "assistant",
      uuid: "11111111-1111-4111-8111-111111111111",
      parentUuid: null,
      sessionId: "22222222-2222-4222-8222-222222222222",
      cwd: "/p",
      timestamp: "2026-11-01T00:00:00.000Z",
      message: {
        id: "msg_x",
        role: "assistant",
        model: "claude-imaginary-9",
        content: [{ type: "text", text: "hi" }],
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    };
    writeFileSync(unknown, `${JSON.stringify(rec)}\n`);
    const root2 = tempDir();
    await importForeignFile("claude-code", unknown, { root: root2 });
    const u = await usage(root2, "model");
    expect(u.total.calls).toBe(1);
    expect(u.total.unpricedCalls).toBe(1);
    const text = await cli(["usage", "--root", root2, "--by", "model"]);
    expect(text.stdout).toMatch(/claude-imaginary-9.*unpriced/);
    expect(text.stdout).not.toMatch(/\$0\.0000/);
  });

  it("the ATIF export of an imported session writes no cost_usd of 0: priced from the table, else unpriced and no total", async () => {
    const atif = async (file: string) => {
      const root = tempDir();
      const report = await importForeignFile("claude-code", file, { root });
      let text = "";
      for await (const chunk of exportSession(report.location!, { root, format: "atif" })) text += chunk;
      const doc = JSON.parse(text);
      expect(validateAtif(doc)).toEqual([]);
      return { doc, metrics: doc.steps.filter((s: any) => s.metrics !== undefined).map((s: any) => s.metrics) };
    };
    const known = await atif(join(FIXTURES, "claude-code/v2.1.39-trimmed-258c7280.jsonl"));
    expect(known.metrics.length).toBeGreaterThan(0);
    for (const m of known.metrics) {
      expect(m.cost_usd).toBeGreaterThan(0);
      expect(m.extra.priced_by).toMatch(/^price table \d{4}-\d{2}-\d{2}$/);
    }
    expect(known.doc.final_metrics.total_cost_usd).toBeGreaterThan(0);

    const file = join(tempDir(), "unknown.jsonl");
    const message = { id: "msg_u", role: "assistant", model: "claude-imaginary-9", content: [{ type: "text", text: "hi" }] };
    const rec = { type: "assistant", uuid: "u1", parentUuid: null, sessionId: "s-unknown", cwd: "/p", timestamp: "2026-11-01T00:00:00Z" };
    writeFileSync(file, `${JSON.stringify({ ...rec, message: { ...message, usage: { input_tokens: 10, output_tokens: 5 } } })}\n`);
    const unknown = await atif(file);
    expect(unknown.metrics).toHaveLength(1);
    expect(unknown.metrics[0].cost_usd).toBeUndefined();
    expect(unknown.metrics[0].extra.unpriced).toBe(true);
    expect(unknown.doc.final_metrics.total_cost_usd).toBeUndefined();
    expect(unknown.doc.final_metrics.extra).toEqual({ unpriced_steps: 1 });
  });
});
