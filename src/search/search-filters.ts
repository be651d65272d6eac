import { resolveRecordedCwd } from "../session/paths.ts";
import { TranscriptStoreError } from "../errors.ts";
import { SEARCH_ROLES } from "./entry-text.ts";
import type { SearchOptions } from "./session-index.ts";

/** Hits returned when no `limit` is given. @default 20 */
export const DEFAULT_SEARCH_LIMIT = 20;

function invalidOption(message: string): TranscriptStoreError {
  return new TranscriptStoreError("INVALID_OPTION", message);
}

function timeOf(name: string, value: unknown): number {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw invalidOption(`${name} must be a valid Date`);
  return value.getTime();
}

/** A text filter: a non-empty string without NUL (SQLite's string functions stop at one; PostgreSQL refuses it). */
function textFilter(name: string, value: unknown): string {
  if (typeof value !== "string" || value === "" || value.includes("\u0000"))
    throw invalidOption(`${name} must be a non-empty string without NUL`);
  return value;
}

/** The SQL conditions of the search options, validated once. */
export function searchFilters(options: SearchOptions): {
  where: string[];
  params: unknown[];
  limit: number;
  sort: "relevance" | "recent";
  now: number;
} {
  if (typeof options !== "object" || options === null) throw invalidOption("search options must be an object");
  if (options.refresh !== undefined && typeof options.refresh !== "boolean") throw invalidOption("refresh must be a boolean");
  const where: string[] = [];
  const params: unknown[] = [];
  if (options.cwd !== undefined) {
    where.push("s.cwd = ?");
    params.push(resolveRecordedCwd(textFilter("cwd", options.cwd)));
  }
  if (options.since !== undefined) {
    where.push("e.ts_ms >= ?");
    params.push(timeOf("since", options.since));
  }
  if (options.until !== undefined) {
    where.push("e.ts_ms <= ?");
    params.push(timeOf("until", options.until));
  }
  if (options.roles !== undefined) {
    if (!Array.isArray(options.roles) || options.roles.length === 0 || options.roles.some((r) => !SEARCH_ROLES.includes(r)))
      throw invalidOption(`roles must be a non-empty array of ${SEARCH_ROLES.join(", ")}`);
    where.push(`e.role IN (${options.roles.map(() => "?").join(", ")})`);
    params.push(...options.roles);
  }
  if (options.model !== undefined) {
    where.push("instr(lower(e.model), lower(?)) > 0");
    params.push(textFilter("model", options.model));
  }
  if (options.session !== undefined) {
    const session = textFilter("session", options.session);
    where.push("substr(s.session_id, 1, length(?)) = ?");
    params.push(session, session);
  }
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) throw invalidOption("limit must be a positive integer");
  const sort = options.sort ?? "relevance";
  if (sort !== "relevance" && sort !== "recent") throw invalidOption('sort must be "relevance" or "recent"');
  const now = options.now === undefined ? Date.now() : timeOf("now", options.now);
  return { where, params, limit, sort, now };
}
