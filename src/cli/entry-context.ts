import type { SessionEntry } from "../format/types.ts";
import { windowText } from "../search/entry-window.ts";
import { UsageError } from "./context.ts";
import { terminalLines } from "./terminal-text.ts";

export { entryWindow } from "../search/entry-window.ts";

/** The options of a command that prints entries in context (`-C`, `-A`, `-B`, as grep has them). */
export const CONTEXT_OPTIONS = {
  context: { type: "string", short: "C" },
  after: { type: "string", short: "A" },
  before: { type: "string", short: "B" },
} as const;

/** `-C`/`-A`/`-B` as grep reads them: `-A` and `-B` each override `-C` on their side. */
export function contextCounts(values: Record<string, unknown>): { before: number; after: number } {
  const count = (name: string): number | undefined => {
    const v = values[name];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!/^\d{1,6}$/.test(String(v)) || !Number.isSafeInteger(n))
      throw new UsageError(`--${name} must be a non-negative integer, got ${String(v)}`);
    return n;
  };
  const around = count("context") ?? 0;
  return { before: count("before") ?? around, after: count("after") ?? around };
}

/** An entry with its neighbours as `show --at` prints it (src/search/entry-window.ts), terminal-safe. */
export function formatWindow(window: { entries: SessionEntry[]; at: number }): string {
  return terminalLines(windowText(window));
}
