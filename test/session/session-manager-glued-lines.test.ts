import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const v1Header = '{"type":"session","id":"glued-1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/g"}';
const m = (t: string) => `{"type":"message","timestamp":"t","message":{"role":"user","content":"${t}"}}`;
const compaction = '{"type":"compaction","timestamp":"t","summary":"S","firstKeptEntryIndex":2,"tokensBefore":5}';

describe("SessionManager: a line of glued records", () => {
  it("loads every record, reports the repair, and on rewrite splits the line keeping its bytes in quarantine", async () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const glued = m("b") + compaction;
    writeFileSync(path, `${[v1Header, m("a"), glued, m("c")].join("\n")}\n`);
    const warnings: StoreWarning[] = [];
    const session = await SessionManager.open(path, { root: dir, onWarning: (w) => warnings.push(w) });
    expect(session.getEntries().map((e) => e.type)).toEqual(["message", "message", "compaction", "message"]);
    expect(session.loadReport.malformed).toEqual([]);
    expect(session.loadReport.repaired).toMatchObject([{ line: 3 }]);
    expect(warnings.map((w) => w.code)).toContain("GLUED_RECORDS_SPLIT");
    expect(session.buildContext().messages[0]).toMatchObject({ role: "compactionSummary", summary: "S" });
    await session.close();
    // The legacy file was rewritten (v1 → v3): one record per line, the original line in quarantine.
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(5);
    for (const line of lines) JSON.parse(line);
    const quarantined = readFileSync(quarantinePathOf(path), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(quarantined).toMatchObject([{ type: "quarantine", line: 3, text: glued }]);
  });

  it("a current file keeps its glued line in place (nothing rewritten) and still loads every record", async () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const header = '{"type":"session","version":3,"id":"glued-3","timestamp":"t","cwd":"/g"}';
    const a = '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"a"}}';
    const b = '{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","message":{"role":"user","content":"b"}}';
    const text = `${header}\n${a}${b}\n`;
    writeFileSync(path, text);
    const session = await SessionManager.open(path, { root: dir });
    expect(session.getEntries().map((e) => e.id)).toEqual(["aaaaaaaa", "bbbbbbbb"]);
    expect(session.getLeafId()).toBe("bbbbbbbb");
    await session.close();
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(existsSync(quarantinePathOf(path))).toBe(false);
  });
});

describe("a pretty-printed .jsonl", () => {
  it("is one clear problem for open, verify and migrate, and is never rewritten", async () => {
    const dir = tempDir();
    const path = join(dir, "pretty.jsonl");
    const objects = [JSON.parse(v1Header), JSON.parse(m("a")), JSON.parse(m("b"))];
    const text = `${objects.map((o) => JSON.stringify(o, null, 2)).join("\n")}\n`;
    writeFileSync(path, text);
    const err = await SessionManager.open(path, { root: dir }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("BAD_HEADER");
    expect((err as Error).message).toContain("pretty-printed");
    const verify = await cli(["verify", path, "--root", dir, "--json"]);
    expect(verify.code).toBe(1);
    const findings = verify.records.filter((r) => r.kind !== undefined);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ kind: "BAD_HEADER" });
    for (const mode of [[], ["--in-place"]]) {
      const migrate = await cli(["migrate", path, ...mode, "--root", join(dir, "store"), "--json"]);
      expect(migrate.code).toBe(1);
      expect(migrate.records[0]).toMatchObject({ status: "failed", error: { code: "BAD_HEADER" } });
      expect(migrate.records[0]!.error.message).toContain("pretty-printed");
    }
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(readdirSync(dir).filter((n) => n !== "store")).toEqual(["pretty.jsonl"]); // no quarantine, no .bak
  });
});
