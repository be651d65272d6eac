import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/format/types.ts";
import { prepareLine, resolvePrepareOptions } from "../../src/prepare/pipeline.ts";
import { TRUNCATION_SUFFIX } from "../../src/prepare/truncate-strings.ts";

// pi 1.5.2 rebuilds its prompt from persisted system messages (and a compaction's systemMessage):
// the pipeline must write them exactly, whatever their size and whatever their tool schemas name.
const options = resolvePrepareOptions({ maxStringChars: 1000 });
const long = "p".repeat(5000);
const tool = {
  name: "patch",
  description: "a tool whose schema names a field partialJson",
  parameters: { type: "object", properties: { partialJson: { type: "string", description: long } } },
};
const systemMessage = { role: "system", content: long, sections: { rules: long }, toolsAdded: [tool], timestamp: 1 };

function entry(fields: Record<string, unknown>): SessionEntry {
  return { id: "e1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", ...fields } as SessionEntry;
}

describe("prepare keeps pi's prompt state intact", () => {
  it("a system-role message entry is written whole: no transient key removed, no string cut", () => {
    const e = entry({ type: "message", message: systemMessage });
    const prepared = prepareLine(e, options);
    expect(JSON.parse(prepared.line)).toEqual(JSON.parse(JSON.stringify(e)));
  });

  it("a compaction's systemMessage is written whole while its other fields still go through the stages", () => {
    const e = entry({ type: "compaction", summary: long, firstKeptEntryId: "e1", tokensBefore: 1, systemMessage, partialJson: "{" });
    const out = JSON.parse(prepareLine(e, options).line);
    expect(out.systemMessage).toEqual(systemMessage);
    expect(out.summary.endsWith(TRUNCATION_SUFFIX)).toBe(true);
    expect("partialJson" in out).toBe(false);
  });

  it("the same content in a user message is still cut and stripped (only prompt state is exempt)", () => {
    const e = entry({ type: "message", message: { role: "user", content: long, partialJson: "{" } });
    const out = JSON.parse(prepareLine(e, options).line);
    expect(out.message.content.endsWith(TRUNCATION_SUFFIX)).toBe(true);
    expect("partialJson" in out.message).toBe(false);
  });

  it("usage and context_edit entries pass through unchanged", () => {
    const usage = entry({
      type: "usage",
      kind: "future_kind",
      provider: "p",
      model: "m",
      usage: { input: 1, output: 2, totalTokens: 3, cost: { total: 0 } },
    });
    const edit = entry({ type: "context_edit", targetId: "x", replacement: null });
    expect(prepareLine(usage, options).line).toBe(JSON.stringify(usage));
    expect(prepareLine(edit, options).line).toBe(JSON.stringify(edit));
  });
});
