import { describe, expect, it } from "vitest";
import { migrateSession } from "../../src/format/migrate.ts";
import { parseSessionBytes, PRETTY_PRINTED_PROBLEM } from "../../src/format/session-parser.ts";

const header = '{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/x"}';
const e1 = '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"a }{ \\" b"}}';
const e2 =
  '{"type":"compaction","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","summary":"s","firstKeptEntryId":"aaaaaaaa","tokensBe' +
  'fore":1}';
const e3 = '{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"t","message":{"role":"user","content":"c"}}';

describe("SessionParser: records glued on one line", () => {
  it("reads each record of a glued line and reports the line as a repair, keeping its bytes", () => {
    const text = `${header}\n${e1}${e2}\n${e3}\n`;
    const p = parseSessionBytes(Buffer.from(text));
    expect(p.malformed).toEqual([]);
    expect(p.records.map((r) => r.record.id)).toEqual(["aaaaaaaa", "bbbbbbbb", "cccccccc"]);
    expect(p.records.map((r) => r.lineIndex)).toEqual([1, 2, 3]);
    expect(p.repaired).toHaveLength(1);
    expect(p.repaired[0]).toMatchObject({ line: 2, offset: header.length + 1 });
    expect(p.repaired[0]!.reason).toContain("2 records glued");
    expect(p.repaired[0]!.bytes.toString()).toBe(e1 + e2);
  });

  it("a glued v1 compaction counts as its own position (pi's index counts every record)", () => {
    const v1 = `${[
      '{"type":"session","id":"g1","timestamp":"t","cwd":"/x"}',
      '{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}' +
        '{"type":"message","timestamp":"t","message":{"role":"user","content":"b"}}',
      '{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}',
    ].join("\n")}\n`;
    const p = parseSessionBytes(Buffer.from(v1));
    const { entries } = migrateSession(p.header!, p.records);
    expect(entries.map((e) => e.type)).toEqual(["message", "message", "compaction"]);
    expect(entries[2]!.firstKeptEntryId).toBe(entries[1]!.id);
  });

  it("a header glued to the first entry, and an unterminated glued last line, are read too", () => {
    const p = parseSessionBytes(Buffer.from(`${header}${e1}\n${e2}${e3}`));
    expect(p.header?.id).toBe("s1");
    expect(p.records.map((r) => r.record.id)).toEqual(["aaaaaaaa", "bbbbbbbb", "cccccccc"]);
    expect(p.repaired.map((r) => r.line)).toEqual([1, 2]);
    expect(p.tornTail).toBeNull();
    expect(p.missingFinalNewline).toBe(true);
  });

  it("a glued line whose second part is broken stays one malformed line", () => {
    const p = parseSessionBytes(Buffer.from(`${header}\n${e1}{"type":"mess\n${e3}\n`));
    expect(p.repaired).toEqual([]);
    expect(p.malformed.map((m) => m.line)).toEqual([2]);
    expect(p.records.map((r) => r.record.id)).toEqual(["cccccccc"]);
  });
});

describe("SessionParser: pretty-printed files", () => {
  const pretty = (value: object) => JSON.stringify(value, null, 2);
  const objects = [JSON.parse(header), JSON.parse(e1), JSON.parse(e2), JSON.parse(e3)];

  it("a pretty-printed file is one clear problem, not hundreds of malformed lines", () => {
    const p = parseSessionBytes(Buffer.from(`${objects.map(pretty).join("\n")}\n`));
    expect(p.header).toBeNull();
    expect(p.headerProblem).toBe(PRETTY_PRINTED_PROBLEM);
    expect(p.malformed).toEqual([]);
  });

  it("pretty-printed entries under a one-line header are the same single problem", () => {
    const p = parseSessionBytes(Buffer.from(`${[header, ...objects.slice(1).map(pretty)].join("\n")}\n`));
    expect(p.header).toBeNull();
    expect(p.headerProblem).toBe(PRETTY_PRINTED_PROBLEM);
  });

  it("a stray brace line in a good file is just a malformed line", () => {
    const p = parseSessionBytes(Buffer.from(`${header}\n${e1}\n{\n}\n${e2}\n${e3}\n`));
    expect(p.header?.id).toBe("s1");
    expect(p.malformed.map((m) => m.line)).toEqual([3, 4]);
    expect(p.records).toHaveLength(3);
  });
});
