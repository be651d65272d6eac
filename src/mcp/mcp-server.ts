import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import { entryWindow, windowText } from "../search/entry-window.ts";
import type { SessionIndex } from "../search/session-index.ts";
import { type McpStore, searchOptionsOf, searchResult } from "./mcp-tools.ts";

/**
 * `transcript-store mcp`: a Model Context Protocol server (the official TypeScript SDK) serving three
 * read-only tools over stdio, so an agent can look up what was said in earlier sessions: `search`
 * (the store's index), `show` (an entry with its neighbours) and `usage` (tokens and cost). Output is
 * redacted (secrets replaced by markers) unless the store says otherwise. Nothing is written.
 */
export async function serveMcp(
  store: McpStore,
  version: string,
  transport: Transport = new StdioServerTransport(),
): Promise<{ server: McpServer; closed: Promise<void> }> {
  const server = new McpServer({ name: "transcript-store", version });
  let index: Promise<SessionIndex> | null = null;

  server.registerTool(
    "search",
    {
      description:
        "Search every stored coding-agent session: words (any form: crash finds crashes), identifier parts " +
        '(parse statement finds parseStatement), "exact phrases", prefix*. Hits ranked by relevance and recency.',
      inputSchema: {
        query: z.string().min(1),
        limit: z.number().int().min(1).max(100).optional(),
        cwd: z.string().optional(),
        since: z.string().optional().describe("an ISO date: entries at or after it"),
        sort: z.enum(["relevance", "recent"]).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      index ??= store.openIndex();
      const hits = await (await index).search(args.query, searchOptionsOf(args));
      const result = searchResult(hits, store);
      return { content: [{ type: "text", text: result.text }], structuredContent: { hits: result.hits } };
    },
  );

  server.registerTool(
    "show",
    {
      description: "Show an entry of a session (a search hit's session and entry) with `context` entries each side.",
      inputSchema: {
        session: z.string().min(1).describe("a session id, id prefix or path"),
        at: z.string().min(1).describe("the entry id"),
        context: z.number().int().min(0).max(50).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      const { sessionId, entries } = await store.entries(args.session);
      const around = args.context ?? 3;
      const window = entryWindow(entries, args.at, around, around);
      const text = store.redact(windowText({ entries: window.entries, at: window.at }));
      return { content: [{ type: "text", text: `session ${sessionId}\n${text}` }] };
    },
  );

  server.registerTool(
    "usage",
    {
      description: "Token usage and cost of the stored sessions, grouped by session, day, model or cwd.",
      inputSchema: {
        by: z.enum(["session", "day", "model", "cwd"]).optional(),
        since: z.string().optional().describe("an ISO date"),
        until: z.string().optional().describe("an ISO date"),
      },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      const report = await store.usage({
        by: args.by,
        ...(args.since !== undefined ? { since: new Date(args.since) } : {}),
        ...(args.until !== undefined ? { until: new Date(args.until) } : {}),
      });
      return { content: [{ type: "text", text: JSON.stringify(report, null, 2) }] };
    },
  );

  await server.connect(transport);
  // the client closed the connection (stdin ended): the index is closed, then `closed` settles
  const closed = new Promise<void>((resolve) => {
    const before = server.server.onclose;
    server.server.onclose = () => {
      before?.();
      void (index ?? Promise.resolve(null)).then((i) => i?.close()).finally(resolve);
    };
  });
  return { server, closed };
}
