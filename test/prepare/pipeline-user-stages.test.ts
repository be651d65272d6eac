import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/format/types.ts";
import { prepareLine, resolvePrepareOptions, type PrepareStage } from "../../src/prepare/pipeline.ts";

function entry(text: string): SessionEntry {
  return { type: "message", id: "aaaaaaaa", parentId: null, timestamp: "t", message: { role: "user", content: text } };
}

/** A redaction stage that declares it has nothing to do on lines without "sk-"; counts its calls. */
function redaction(): PrepareStage & { calls: number } {
  const stage = Object.assign(
    (e: SessionEntry): SessionEntry => {
      stage.calls++;
      const text = (e.message as { content: string }).content;
      return text.includes("sk-") ? { ...e, message: { role: "user", content: text.replaceAll(/sk-\w+/g, "[redacted]") } } : e;
    },
    { calls: 0, needed: (line: string) => line.includes("sk-") },
  );
  return stage;
}

describe("user stages that declare when they have nothing to do", () => {
  it("is not called for a line that does not match, and the entry comes back as it is", () => {
    const stage = redaction();
    const options = resolvePrepareOptions({ stages: [stage] });
    const input = entry("nothing secret here");
    const out = prepareLine(input, options);
    expect(stage.calls).toBe(0);
    expect(out.entry).toBe(input);
    expect(out.line).toBe(JSON.stringify(input));
  });

  it("is called for a line that matches", () => {
    const stage = redaction();
    const out = prepareLine(entry("key sk-abc123"), resolvePrepareOptions({ stages: [stage] }));
    expect(stage.calls).toBe(1);
    expect(out.line).toContain("[redacted]");
    expect(out.line).not.toContain("sk-abc123");
  });

  it("only the stages that are needed run, in order, next to stages without a declaration", () => {
    const declared = redaction();
    let plainCalls = 0;
    const plain: PrepareStage = (e) => {
      plainCalls++;
      return e;
    };
    const options = resolvePrepareOptions({ stages: [declared, plain] });
    prepareLine(entry("a"), options);
    prepareLine(entry("b"), options);
    expect(declared.calls).toBe(0);
    expect(plainCalls).toBe(2);
  });

  it("runs when the pipeline only has the parsed-from text", () => {
    const stage = redaction();
    const options = resolvePrepareOptions({ stages: [stage] });
    const input = entry("plain");
    prepareLine(input, options, JSON.stringify(input));
    expect(stage.calls).toBe(1);
  });

  it("rejects a needed that is not a function with INVALID_OPTION", () => {
    const stage = Object.assign((e: SessionEntry) => e, { needed: "sk-" }) as unknown as PrepareStage;
    expect(() => resolvePrepareOptions({ stages: [stage] })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });
});
