import type { SearchHit } from "../search/session-index.ts";
import { type CliIo, UsageError } from "./context.ts";
import { terminalSafe, terminalText } from "./terminal-text.ts";

/** The fields a `--format` template may name, each `{field}`: one line per hit, for pickers (fzf). */
export const FORMAT_FIELDS = [
  "sessionId",
  "entryId",
  "role",
  "timestamp",
  "cwd",
  "title",
  "snippet",
  "score",
  "location",
  "forks",
] as const;

const FIELD = /\{([A-Za-z]+)\}/g;

/** A `--format` template checked: its fields known (`\t` and `\n` in it stand for a tab and a newline). */
export function checkFormat(template: string): string {
  for (const m of template.matchAll(FIELD))
    if (!(FORMAT_FIELDS as readonly string[]).includes(m[1]!))
      throw new UsageError(terminalText`--format: unknown field {${m[1]}} (fields: ${FORMAT_FIELDS.join(", ")})`);
  return template.replaceAll("\\t", "\t").replaceAll("\\n", "\n");
}

/** One hit through a checked `--format` template: each value on one line (whitespace collapsed), terminal-safe. */
export function formatHit(template: string, hit: SearchHit): string {
  return template.replace(FIELD, (_, name: string) => {
    const value = name === "forks" ? String(hit.alsoIn.length) : String(hit[name as keyof SearchHit] ?? "");
    return terminalSafe(value.replace(/\s+/gu, " ").trim());
  });
}

/** True when matches are coloured: stdout is a terminal and `NO_COLOR` is unset or empty (no-color.org). */
export function useColour(io: CliIo): boolean {
  return io.stdoutIsTTY === true && (io.env.NO_COLOR ?? "") === "" && io.stdoutMarked !== undefined;
}

/** Prints a hit's text: its matches in colour through the terminal writer's `stdoutMarked` when `colour`, marked « » elsewhere. */
export function printHitText(io: CliIo, text: string, colour: boolean): void {
  if (colour) io.stdoutMarked!(`${text}\n`);
  else io.stdout(`${text}\n`);
}

/** A hit as the CLI prints it: session, entry, role, time, cwd and title; "also in N forks"; the snippet indented. */
export function hitText(hit: SearchHit): string {
  const time = hit.timestamp === "" ? "-" : hit.timestamp.slice(0, 16).replace("T", " ");
  const forks = hit.alsoIn.length === 0 ? "" : `  (also in ${hit.alsoIn.length} fork${hit.alsoIn.length === 1 ? "" : "s"})`;
  const head = terminalText`${hit.sessionId}  ${hit.entryId}  ${hit.role}  ${time}  ${hit.cwd}  ${hit.title}`;
  return `${head}${forks}\n    ${terminalSafe(hit.snippet)}`;
}
