import { describe, expect, it } from "vitest";
import { parseSessionBytes } from "../../src/format/session-parser.ts";

const header = '{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/x"}';
const e1 = '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}';
const e2 = '{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","message":{"role":"assistant","content":"yo"}}';

describe("SessionParser", () => {
  it("reads a header and entries with positions", () => {
    const p = parseSessionBytes(Buffer.from(`${header}\n${e1}\n${e2}\n`));
    expect(p.header?.id).toBe("s1");
    expect(p.records.map((r) => [r.record.id, r.lineIndex])).toEqual([
      ["aaaaaaaa", 1],
      ["bbbbbbbb", 2],
    ]);
    expect(p.malformed).toEqual([]);
    expect(p.tornTail).toBeNull();
    expect(p.completeLength).toBe(Buffer.byteLength(`${header}\n${e1}\n${e2}\n`));
  });

  it("keeps the raw bytes, line and offset of a malformed middle line", () => {
    const bad = '{"type":"message", "id": broken';
    const text = `${header}\n${bad}\n${e1}\n`;
    const p = parseSessionBytes(Buffer.from(text));
    expect(p.malformed).toHaveLength(1);
    expect(p.malformed[0]!.line).toBe(2);
    expect(p.malformed[0]!.offset).toBe(header.length + 1);
    expect(p.malformed[0]!.bytes.toString()).toBe(bad);
    expect(p.records).toHaveLength(1);
  });

  it("flags invalid UTF-8 as malformed, keeping its exact bytes", () => {
    const bad = Buffer.concat([Buffer.from('{"type":"x","id":"cccccccc","v":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const p = parseSessionBytes(Buffer.concat([Buffer.from(`${header}\n`), bad, Buffer.from("\n")]));
    expect(p.malformed[0]!.reason).toBe("invalid UTF-8");
    expect(p.malformed[0]!.bytes.equals(bad)).toBe(true);
  });

  it("separates a torn unterminated tail from a valid unterminated last line", () => {
    const torn = parseSessionBytes(Buffer.from(`${header}\n${e1}\n{"type":"mess`));
    expect(torn.tornTail?.bytes.toString()).toBe('{"type":"mess');
    expect(torn.completeLength).toBe(header.length + e1.length + 2);
    expect(torn.missingFinalNewline).toBe(false);
    const noNewline = parseSessionBytes(Buffer.from(`${header}\n${e1}`));
    expect(noNewline.tornTail).toBeNull();
    expect(noNewline.missingFinalNewline).toBe(true);
    expect(noNewline.records).toHaveLength(1);
  });

  it("tolerates a BOM and folds an omp title line into the header", () => {
    const bom = parseSessionBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${header}\n${e1}\n`)]));
    expect(bom.header?.id).toBe("s1");
    expect(bom.headerProblem).toBeNull();
    const omp = parseSessionBytes(Buffer.from(`${'{"type":"title","v":1,"title":"My work"}'.padEnd(120)}\n${header}\n${e1}\n`));
    expect(omp.header?.title).toBe("My work");
    expect(omp.records).toHaveLength(1);
  });

  it("reports a garbage header instead of guessing", () => {
    expect(parseSessionBytes(Buffer.from(`garbage\n${e1}\n`)).headerProblem).toMatch(/header/);
    expect(parseSessionBytes(Buffer.from(`${e1}\n`)).headerProblem).toMatch(/not a session header/);
  });

  it("skips and counts NUL runs, and treats a NUL-only tail as torn", () => {
    const text = Buffer.concat([Buffer.from(`${header}\n`), Buffer.alloc(16), Buffer.from(`${e1}\n`), Buffer.alloc(8)]);
    const p = parseSessionBytes(text);
    expect(p.nulRuns).toBe(2);
    expect(p.records).toHaveLength(1);
    expect(p.tornTail?.bytes.length).toBe(8);
  });

  it("marks duplicate ids and id-less v3 entries as malformed", () => {
    const p = parseSessionBytes(Buffer.from(`${header}\n${e1}\n${e1}\n{"type":"message"}\n`));
    expect(p.records).toHaveLength(1);
    expect(p.malformed.map((m) => m.reason)).toEqual(["duplicate entry id aaaaaaaa", "entry has no id"]);
  });
});
