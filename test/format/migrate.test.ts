import { describe, expect, it } from "vitest";
import { migrateSession } from "../../src/format/migrate.ts";
import { parseSessionBytes } from "../../src/format/session-parser.ts";

const v1 = `${[
  '{"type":"session","id":"legacy-1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","provider":"anthropic","modelId":"m"}',
  '{"type":"message","timestamp":"t1","message":{"role":"user","content":"a"}}',
  '{"type":"message","timestamp":"t2","message":{"role":"assistant","content":"b"}}',
  '{"type":"message","timestamp":"t3","message":{"role":"user","content":"c"}}',
  '{"type":"compaction","timestamp":"t4","summary":"S","firstKeptEntryIndex":3,"tokensBefore":10}',
  '{"type":"message","timestamp":"t5","message":{"role":"hookMessage","content":"h"}}',
].join("\n")}\n`;

function migrate(text: string) {
  const parsed = parseSessionBytes(Buffer.from(text));
  return migrateSession(parsed.header!, parsed.records);
}

describe("migrations", () => {
  it("v1 → v3: ids chain in file order, firstKeptEntryIndex becomes the right id, hookMessage becomes custom", () => {
    const { header, entries, migratedFrom } = migrate(v1);
    expect(migratedFrom).toBe(1);
    expect(header.version).toBe(3);
    expect(Object.keys(header).slice(0, 2)).toEqual(["type", "version"]);
    for (const entry of entries) expect(entry.id).toMatch(/^[0-9a-f]{8}$/);
    expect(entries[0]!.parentId).toBeNull();
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.parentId).toBe(entries[i - 1]!.id);
    const compaction = entries[3]!;
    expect(compaction.firstKeptEntryId).toBe(entries[2]!.id); // index 3 counts the header as 0
    expect("firstKeptEntryIndex" in compaction).toBe(false);
    expect((entries[4]!.message as { role: string }).role).toBe("custom");
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  });

  it("is deterministic: two loads give identical ids", () => {
    expect(migrate(v1).entries).toEqual(migrate(v1).entries);
  });

  it("is idempotent: migrating the migrated session changes nothing", () => {
    const once = migrate(v1);
    const text = `${[JSON.stringify(once.header), ...once.entries.map((e) => JSON.stringify(e))].join("\n")}\n`;
    const twice = migrate(text);
    expect(twice.migratedFrom).toBeNull();
    expect(twice.entries).toEqual(once.entries);
    expect(twice.header).toEqual(once.header);
  });

  it("does not mutate its input", () => {
    const parsed = parseSessionBytes(Buffer.from(v1));
    const before = structuredClone(parsed.records);
    migrateSession(parsed.header!, parsed.records);
    expect(parsed.records).toEqual(before);
  });

  it("returns current records by identity", () => {
    const text =
      '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n{"type":"x","id":"aaaaaaaa","parentId":null,"timestamp":"t"}\n';
    const parsed = parseSessionBytes(Buffer.from(text));
    const { entries } = migrateSession(parsed.header!, parsed.records);
    expect(entries[0]).toBe(parsed.records[0]!.record);
  });

  it("points a kept index that names a lost line at the next surviving entry", () => {
    const text = v1.replace('{"type":"message","timestamp":"t3","message":{"role":"user","content":"c"}}', "{broken");
    const { entries } = migrate(text);
    const compaction = entries.find((e) => e.type === "compaction")!;
    // pi counts parsed objects only, so index 3 is now the compaction itself.
    expect(compaction.firstKeptEntryId).toBe(compaction.id);
  });

  it("v2 → v3 keeps ids and converts hookMessage", () => {
    const text =
      '{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/"}\n{"type":"message","id":"aaaaaaaa","parentId":null,"timest' +
      'amp":"t","message":{"role":"hookMessage","content":"x","extra":1}}\n';
    const { entries, migratedFrom } = migrate(text);
    expect(migratedFrom).toBe(2);
    expect(entries[0]).toEqual({
      type: "message",
      id: "aaaaaaaa",
      parentId: null,
      timestamp: "t",
      message: { role: "custom", content: "x", extra: 1 },
    });
  });
});

describe("migrations make ids unique", () => {
  const head = '{"type":"session","id":"dup-1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}';
  const rec = (id: string, text: string, extra = "") =>
    `{"type":"message","id":"${id}"${extra},"timestamp":"t","message":{"role":"user","content":"${text}"}}`;

  it("v1 records that repeat an id each become an entry of their own, deterministically and idempotently", () => {
    const text = `${[
      head,
      rec("abcdef01", "a"),
      rec("abcdef01", "b"),
      rec("abcdef01", "c"),
      '{"type":"message","id":"","timestamp":"t","message":{"role":"user","content":"d"}}',
    ].join("\n")}\n`;
    const once = migrate(text);
    expect(once.entries.map((e) => (e.message as { content: string }).content)).toEqual(["a", "b", "c", "d"]);
    expect(once.entries[0]!.id).toBe("abcdef01");
    const ids = once.entries.map((e) => e.id);
    expect(new Set(ids).size).toBe(4);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}$/);
    for (let i = 1; i < ids.length; i++) expect(once.entries[i]!.parentId).toBe(ids[i - 1]);
    expect(migrate(text).entries).toEqual(once.entries); // deterministic
    const written = `${[JSON.stringify(once.header), ...once.entries.map((e) => JSON.stringify(e))].join("\n")}\n`;
    const twice = migrate(written);
    expect(twice.migratedFrom).toBeNull();
    expect(twice.entries).toEqual(once.entries); // idempotent: nothing hidden on the next load
    expect(parseSessionBytes(Buffer.from(written)).malformed).toEqual([]);
  });

  it("v2 records that repeat an id are all kept; the repeat gets a derived id, parents keep naming the first", () => {
    const v2 = head.replace('"type":"session"', '"type":"session","version":2');
    const text = `${[
      v2,
      rec("aaaaaaaa", "a", ',"parentId":null'),
      rec("aaaaaaaa", "b", ',"parentId":"aaaaaaaa"'),
      rec("bbbbbbbb", "c", ',"parentId":"aaaaaaaa"'),
    ].join("\n")}\n`;
    const parsed = parseSessionBytes(Buffer.from(text));
    expect(parsed.malformed).toEqual([]);
    const { entries } = migrateSession(parsed.header!, parsed.records);
    expect(entries.map((e) => (e.message as { content: string }).content)).toEqual(["a", "b", "c"]);
    expect(entries[0]!.id).toBe("aaaaaaaa");
    expect(entries[1]!.id).not.toBe("aaaaaaaa");
    expect(entries[1]!.id).toMatch(/^[0-9a-f]{8}$/);
    expect(entries[2]).toMatchObject({ id: "bbbbbbbb", parentId: "aaaaaaaa" });
    expect(entries[0]).toBe(parsed.records[0]!.record); // untouched records keep their identity
    expect(migrateSession(parsed.header!, parsed.records).entries).toEqual(entries);
  });

  it("a current (v3) file that repeats an id reports the repeat instead of hiding it silently", () => {
    const v3 = head.replace('"type":"session"', '"type":"session","version":3');
    const parsed = parseSessionBytes(
      Buffer.from(`${[v3, rec("aaaaaaaa", "a", ',"parentId":null'), rec("aaaaaaaa", "b", ',"parentId":null')].join("\n")}\n`),
    );
    expect(parsed.records).toHaveLength(1);
    expect(parsed.malformed).toMatchObject([{ line: 3, reason: "duplicate entry id aaaaaaaa" }]);
  });
});
