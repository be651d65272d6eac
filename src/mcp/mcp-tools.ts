import type { SearchHit, SearchOptions, SessionIndex } from "../search/session-index.ts";
import type { SessionEntry } from "../format/types.ts";

/** What the tools read through: the store's index, its sessions, its usage; given by the caller (the CLI). */
export interface McpStore {
  /** The store's search index (opened once, on the first search). */
  openIndex(): Promise<SessionIndex>;
  /** The entries of a session named by id, id prefix or path (a fork or an archived one too). */
  entries(session: string): Promise<{ sessionId: string; entries: SessionEntry[] }>;
  /** The store's token usage and cost, grouped (`session`, `day`, `model`, `cwd`). */
  usage(options: { since?: Date; until?: Date; by?: string }): Promise<unknown>;
  /** Makes text shareable (secrets replaced by markers); identity when the server was started with redaction off. */
  redact<T>(value: T): T;
}

/** The search tool's result: the hits, each made shareable, and their text form. */
export function searchResult(hits: SearchHit[], store: McpStore): { text: string; hits: SearchHit[] } {
  const shown = hits.map((h) => store.redact(h));
  const text = shown
    .map((h) => {
      const forks = h.alsoIn.length === 0 ? "" : ` (also in ${h.alsoIn.length} fork(s))`;
      return `${h.sessionId} ${h.entryId} ${h.role} ${h.timestamp} ${h.cwd} — ${h.title}${forks}\n  ${h.snippet}`;
    })
    .join("\n");
  return { text: text === "" ? "no hits" : text, hits: shown };
}

/** The search options an agent may give, checked loosely (the index checks them again). */
export function searchOptionsOf(args: { limit?: number; cwd?: string; since?: string; sort?: "relevance" | "recent" }): SearchOptions {
  const options: SearchOptions = { limit: args.limit ?? 10 };
  if (args.cwd !== undefined) options.cwd = args.cwd;
  if (args.since !== undefined) options.since = new Date(args.since);
  if (args.sort !== undefined) options.sort = args.sort;
  return options;
}
