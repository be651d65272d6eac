import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  buildSessionContext,
  CURRENT_SESSION_VERSION,
  findMostRecentSession,
  getDefaultSessionDir,
  getLatestCompactionEntry,
  loadEntriesFromFile,
  migrateSessionEntries,
  parseSessionEntries,
  SessionManager,
  type FileEntry,
  type SessionEntry,
} from "../../src/pi/index.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { assistant, piHome, user } from "./helpers.ts";
import { sha } from "../support/sha.ts";

const T = "2026-01-01T00:00:00.000Z";
const e = (id: string, parentId: string | null, rest: Record<string, unknown>) =>
  ({ id, parentId, timestamp: T, ...rest }) as unknown as SessionEntry;

describe("pi free functions", () => {
  it("CURRENT_SESSION_VERSION is 3", () => {
    expect(CURRENT_SESSION_VERSION).toBe(3);
  });

  it("parseSessionEntries keeps every JSON line, skips blank and broken ones, splits glued records", () => {
    const text = '{"type":"session","id":"s"}\n\n{"type":"a"}\nnot json\n{"type":"b"}{"type":"c"}\n';
    expect(parseSessionEntries(text)).toEqual([{ type: "session", id: "s" }, { type: "a" }, { type: "b" }, { type: "c" }]);
  });

  it("migrateSessionEntries upgrades v1 in place: ids chained, firstKeptEntryIndex → id, hookMessage → custom", () => {
    const entries = [
      { type: "session", id: "s", timestamp: T, cwd: "/w" },
      { type: "message", timestamp: T, message: { role: "user", content: "a" } },
      { type: "message", timestamp: T, message: { role: "hookMessage", content: "h" } },
      { type: "compaction", timestamp: T, summary: "s", firstKeptEntryIndex: 2, tokensBefore: 1 },
    ] as unknown as FileEntry[];
    migrateSessionEntries(entries);
    const [header, m1, m2, c] = entries as any[];
    expect(header.version).toBe(3);
    expect(m1.id).toMatch(/^[0-9a-f]{8}$/);
    expect([m1.parentId, m2.parentId, c.parentId]).toEqual([null, m1.id, m2.id]);
    expect(m2.message.role).toBe("custom");
    expect(c.firstKeptEntryId).toBe(m2.id);
    expect("firstKeptEntryIndex" in c).toBe(false);
    const current = [
      { type: "session", version: 3, id: "s" },
      { type: "message", message: { role: "hookMessage" } },
    ] as unknown as FileEntry[];
    migrateSessionEntries(current);
    expect((current[1] as any).message.role).toBe("hookMessage");
  });

  it("getLatestCompactionEntry finds the last compaction or null", () => {
    const entries = [
      e("a", null, { type: "compaction", summary: "1" }),
      e("b", "a", { type: "message", message: user("x") }),
      e("c", "b", { type: "compaction", summary: "2" }),
    ];
    expect(getLatestCompactionEntry(entries)!.id).toBe("c");
    expect(getLatestCompactionEntry(entries.slice(1, 2))).toBeNull();
  });

  it("buildSessionContext: leaf null/undefined/unknown, model and thinking level, compaction, custom and summary messages", () => {
    const entries = [
      e("u1", null, { type: "message", message: user("one") }),
      e("t", "u1", { type: "thinking_level_change", thinkingLevel: "high" }),
      e("a1", "t", { type: "message", message: assistant("two") }),
      e("u2", "a1", { type: "message", message: user("three") }),
      e("mc", "u2", { type: "model_change", provider: "openai", modelId: "gpt" }),
      e("c", "mc", { type: "compaction", summary: "S", firstKeptEntryId: "a1", tokensBefore: 99 }),
      e("cm", "c", { type: "custom_message", customType: "x", content: "inj", display: true, details: { d: 1 } }),
      e("cu", "cm", { type: "custom", customType: "x", data: 1 }),
      e("other", "u1", { type: "message", message: user("branch") }),
    ];
    expect(buildSessionContext(entries, null)).toEqual({ messages: [], thinkingLevel: "off", model: null });
    expect(buildSessionContext([])).toEqual({ messages: [], thinkingLevel: "off", model: null });
    const last = buildSessionContext(entries);
    expect(last.messages).toEqual([user("one"), user("branch")]);
    const ctx = buildSessionContext(entries, "cu");
    expect(ctx.thinkingLevel).toBe("high");
    expect(ctx.model).toEqual({ provider: "openai", modelId: "gpt" });
    const ms = new Date(T).getTime();
    expect(ctx.messages).toEqual([
      { role: "compactionSummary", summary: "S", tokensBefore: 99, timestamp: ms },
      assistant("two"),
      user("three"),
      { role: "custom", customType: "x", content: "inj", display: true, details: { d: 1 }, timestamp: ms },
    ]);
    expect(buildSessionContext(entries, "a1").model).toEqual({ provider: "anthropic", modelId: "claude" });
    expect(buildSessionContext(entries, "unknown-id").messages).toEqual(last.messages);
    const byId = new Map(entries.map((x) => [x.id, x]));
    expect(buildSessionContext(entries, "cu", byId)).toEqual(ctx);
  });

  it("getDefaultSessionDir names and creates pi's --<cwd>-- directory under <agentDir>/sessions", () => {
    const agentDir = join(tempDir(), "agent");
    const dir = getDefaultSessionDir("/home/u/my:proj", agentDir);
    expect(dir).toBe(join(agentDir, "sessions", "--home-u-my-proj--"));
    expect(existsSync(dir)).toBe(true);
  });

  it("loadEntriesFromFile: [] when absent or headerless, header + entries otherwise, images read back from blobs", () => {
    const h = piHome();
    expect(loadEntriesFromFile(join(h.base, "absent.jsonl"))).toEqual([]);
    const bad = join(h.base, "bad.jsonl");
    writeFileSync(bad, '{"type":"message"}\n');
    expect(loadEntriesFromFile(bad)).toEqual([]);
    const png = makePng(8, 8, 2).toString("base64");
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, blobsDir: h.blobsDir });
    sm.appendMessage({ role: "user", content: [{ type: "image", data: png, mimeType: "image/png" }] });
    sm.appendMessage(assistant("ok"));
    sm.close();
    const loaded = loadEntriesFromFile(sm.getSessionFile()!, { blobsDir: h.blobsDir });
    expect(loaded[0]).toEqual(sm.getHeader());
    expect(loaded.slice(1)).toEqual(sm.getEntries());
    const hash = sha(Buffer.from(png, "base64"));
    expect(JSON.stringify(loaded)).not.toContain(hash);
  });

  it("findMostRecentSession picks the newest valid session file by mtime; null for none", () => {
    const dir = join(tempDir(), "s");
    expect(findMostRecentSession(dir)).toBeNull();
    mkdirSync(dir);
    const make = (name: string, body: string, mtime: number) => {
      const p = join(dir, name);
      writeFileSync(p, body);
      utimesSync(p, mtime, mtime);
      return p;
    };
    const header = '{"type":"session","id":"x","timestamp":"t","cwd":"/"}\n';
    const older = make("a.jsonl", header, 1000);
    make("b.jsonl", "garbage\n", 3000);
    make("c.quarantine.jsonl", header, 4000);
    make("d.txt", header, 5000);
    expect(findMostRecentSession(dir)).toBe(older);
    const newer = make("e.jsonl", header, 2000);
    expect(findMostRecentSession(dir)).toBe(newer);
  });
});
