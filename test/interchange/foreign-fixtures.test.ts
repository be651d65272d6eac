import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { exportForeign, foreignLineBytes, type ForeignExportLine } from "../../src/interchange/export-foreign.ts";
import type { InterchangeFormat } from "../../src/interchange/foreign-entry.ts";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { resolveSessionManagerOptions } from "../../src/session/session-options.ts";
import { backendOf } from "../../src/storage/backends.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/foreign");

function fixtures(format: InterchangeFormat): string[] {
  return readdirSync(join(FIXTURES, format))
    .filter((n) => n.endsWith(".jsonl"))
    .map((n) => join(FIXTURES, format, n));
}

/** The source's lines as JSON values (every fixture line parses). */
function recordsOf(path: string): unknown[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

async function collect(lines: AsyncGenerator<ForeignExportLine, unknown>): Promise<ForeignExportLine[]> {
  const out: ForeignExportLine[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

for (const format of ["claude-code", "codex"] as const) {
  describe(`${format} fixtures`, () => {
    for (const path of fixtures(format)) {
      const name = path.slice(path.lastIndexOf("/") + 1);
      it(`${name}: every line accounted for, opens with user/assistant/tool turns in order, exports back equal`, async () => {
        const root = tempDir("ts-foreign-");
        const records = recordsOf(path);
        const report = await importForeignFile(format, path, { root });
        expect(report.status).toBe("created");
        expect(report.counts.records).toBe(records.length);
        expect(report.counts.mapped + report.counts.kept + report.counts.damaged).toBe(records.length);
        expect(report.counts.damaged).toBe(0);
        expect(report.counts.mapped).toBeGreaterThan(0);

        const m = await SessionManager.open(report.location!, { root, readOnly: true });
        try {
          expect(m.sessionId).toBe(report.id);
          const roles = m.buildContext().messages.map((msg) => msg.role);
          expect(roles.length).toBeGreaterThan(0);
          // every fixture has a prompt; the one after a compaction is its summary
          expect(roles.includes("user") || roles[0] === "compactionSummary").toBe(true);
          expect(roles.every((r) => ["user", "assistant", "toolResult", "compactionSummary"].includes(r as string))).toBe(true);
          // every tool result answers a tool call made earlier on the path
          const calls = new Set<string>();
          for (const msg of m.buildContext().messages) {
            if (msg.role === "assistant" && Array.isArray(msg.content))
              for (const b of msg.content as Array<Record<string, unknown>>) if (b.type === "toolCall") calls.add(String(b.id));
            if (msg.role === "toolResult" && calls.size > 0) expect(calls.has(String(msg.toolCallId))).toBe(true);
          }
        } finally {
          await m.close();
        }

        const exported = await collect(exportForeign(format, report.id, { root }));
        expect(exported.map((l) => ("record" in l ? l.record : null))).toEqual(records);
        expect(exported.map((l) => l.line)).toEqual(records.map((_, i) => i + 1));
        // a source line in JSON.stringify's form comes back byte for byte (Codex's `10.0` comes back as `10`: equal as JSON)
        const sourceLines = readFileSync(path, "utf8").split("\n").slice(0, -1);
        exported.forEach((l, i) => {
          const canonical = JSON.stringify(JSON.parse(sourceLines[i]!));
          if (canonical === sourceLines[i]) expect(foreignLineBytes(l).toString("utf8")).toBe(`${sourceLines[i]}\n`);
        });

        const again = await importForeignFile(format, path, { root });
        expect(again.status).toBe("unchanged");
        expect(again.id).toBe(report.id);
      });
    }
  });
}

describe("images", () => {
  it("an inline image goes to the blob store (the stored line holds a ref) and comes back inline", async () => {
    const root = tempDir("ts-foreign-");
    const path = join(FIXTURES, "claude-code/synthetic-v1.0.83-images.jsonl");
    const report = await importForeignFile("claude-code", path, { root });
    const stored = readFileSync(report.location!, "utf8");
    expect(stored).toContain("blob:sha256:");
    expect(stored).not.toContain("iVBORw0KGgo");
    const resolved = resolveSessionManagerOptions({ root });
    const ref = await backendOf(resolved).locate(report.id, resolved);
    expect(ref).toBe(report.location);
    const exported = await collect(exportForeign("claude-code", report.id, { root }));
    expect(JSON.stringify(exported.map((l) => ("record" in l ? l.record : null)))).toContain("iVBORw0KGgo");
  });
});

describe("Codex images", () => {
  it("input_image data URLs (pre-envelope and enveloped) are stored as refs and come back inline", async () => {
    for (const name of ["synthetic-v0.2x-pre-envelope.jsonl", "synthetic-v0.116.0-compacted-image.jsonl"]) {
      const root = tempDir("ts-foreign-");
      const path = join(FIXTURES, "codex", name);
      const report = await importForeignFile("codex", path, { root });
      const stored = readFileSync(report.location!, "utf8");
      expect(stored).toContain("blob:sha256:");
      // an event's `images` (bare data URL strings) are no image shape of the store: they stay inline (docs/interchange.md, Limits)
      const inline = stored.split("\n").filter((l) => l.includes("iVBORw0KGgo"));
      expect(inline.every((l) => l.includes('"type":"user_message"') && l.includes('"customType":"codex:event_msg"'))).toBe(true);
      expect(inline.length).toBe(name.includes("0.116") ? 1 : 0);
      const exported = await collect(exportForeign("codex", report.id, { root }));
      expect(exported.map((l) => ("record" in l ? l.record : null))).toEqual(recordsOf(path));
    }
  });
});

describe("compactions", () => {
  it("Claude Code: after a compact boundary the context starts at its summary", async () => {
    const root = tempDir("ts-foreign-");
    const path = join(FIXTURES, "claude-code/v2.1.39-trimmed-258c7280.jsonl");
    const report = await importForeignFile("claude-code", path, { root });
    const m = await SessionManager.open(report.location!, { root, readOnly: true });
    const records = recordsOf(path) as Array<Record<string, unknown>>;
    const summary = records.find((r) => r.isCompactSummary === true)!;
    const first = m.buildContext().messages[0]!;
    expect(first.role).toBe("user");
    expect(first.content).toEqual((summary.message as Record<string, unknown>).content);
    await m.close();
  });

  it("Codex: compacted is a compaction keeping nothing before it (its message the summary)", async () => {
    const root = tempDir("ts-foreign-");
    const report = await importForeignFile("codex", join(FIXTURES, "codex/synthetic-v0.116.0-compacted-image.jsonl"), { root });
    const m = await SessionManager.open(report.location!, { root, readOnly: true });
    const messages = m.buildContext().messages;
    expect(messages.map((msg) => msg.role)).toEqual(["compactionSummary", "assistant"]);
    expect(messages[0]!.summary).toBe("The user asked to fix the cart total; cart.js starts the sum at 1.");
    await m.close();
  });
});

describe("Codex prompts", () => {
  it("a prompt written as both a response item and a user_message event is sent once; one only as an event is sent", async () => {
    const root = tempDir("ts-foreign-");
    const texts = async (name: string) => {
      const report = await importForeignFile("codex", join(FIXTURES, "codex", name), { root });
      const m = await SessionManager.open(report.location!, { root, readOnly: true });
      const users = m
        .buildContext()
        .messages.filter((msg) => msg.role === "user")
        .map((msg) => (msg.content as Array<{ text?: string }>).map((b) => b.text ?? "").join(""));
      await m.close();
      return users;
    };
    const both = await texts("v0.129.0-turn-2.jsonl");
    expect(both.filter((t) => t.includes("Hello, Codex! Please explain what you do."))).toHaveLength(1);
    expect(both.filter((t) => t.includes("What languages can you work with?"))).toHaveLength(1);
    expect(await texts("v0.129.0-spawn-skill.jsonl")).toEqual(["run a review"]);
  });
});
