import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp-dir.ts";
import { message, writeSession } from "../search/helpers/sessions.ts";

const BIN = join(import.meta.dirname, "../../bin/transcript-store.mjs");
const ID = "aaaa1111-0000-4000-8000-000000000001";
const GH = "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";

/** A store of one session whose crash entry holds a token, and a client of `transcript-store mcp` over it (a child process). */
async function connect(extra: string[] = []) {
  const root = tempDir("ts-mcp-");
  writeSession(
    join(root, "sessions"),
    "-tmp-a",
    ID,
    "/work/a",
    message("user", "why does the parser crash", { id: "u1", timestamp: "2026-01-02T10:00:01.000Z" }) +
      message("assistant", `parseStatement crashes; the CI token was ${GH}`, { id: "a1", timestamp: "2026-01-02T10:00:02.000Z" }) +
      message("user", "thanks", { id: "u2", timestamp: "2026-01-02T10:00:03.000Z" }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "--root", root, "mcp", ...extra],
    env: { ...process.env, TRANSCRIPT_STORE_HOME: root, TRANSCRIPT_STORE_URL: "" } as Record<string, string>,
    stderr: "pipe",
  });
  const client = new Client({ name: "transcript-store-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");

// Issue 34: search for agents, with the SDK's own client in a child process.
describe("transcript-store mcp", () => {
  it("serves read-only search, show and usage tools; output redacted by default", async () => {
    const client = await connect();
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(["search", "show", "usage"]);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      const found = await client.callTool({ name: "search", arguments: { query: "crash" } });
      expect(found.isError).toBeFalsy();
      const hits = (found.structuredContent as { hits: Array<{ entryId: string; snippet: string; title: string }> }).hits;
      expect(hits.map((h) => h.entryId).sort()).toEqual(["a1", "u1"]);
      expect(hits[0]!.title).toBe("why does the parser crash");
      const shown = textOf(await client.callTool({ name: "show", arguments: { session: ID, at: "a1", context: 1 } }));
      expect(shown).toContain("> a1");
      expect(shown).toContain("- u1");
      expect(shown).toContain("- u2");
      expect(shown).toContain("[REDACTED:");
      expect(shown).not.toContain(GH);
      expect(JSON.stringify(found)).not.toContain(GH);
      const usage = await client.callTool({ name: "usage", arguments: { by: "session" } });
      expect(usage.isError).toBeFalsy();
      const missing = await client.callTool({ name: "show", arguments: { session: ID, at: "nope" } });
      expect(missing.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("--no-redact shows the text as stored", async () => {
    const client = await connect(["--no-redact"]);
    try {
      const shown = textOf(await client.callTool({ name: "show", arguments: { session: ID, at: "a1" } }));
      expect(shown).toContain(GH);
    } finally {
      await client.close();
    }
  });
});
