import type { IndexLocation } from "../search/index-notify.ts";
import type { CommandContext } from "./context.ts";

/** Where the CLI's file store keeps its search index (as `search` and `index` open it without `--index`). */
export function indexLocationOf(ctx: CommandContext): IndexLocation {
  return { ...(ctx.root !== undefined ? { root: ctx.root } : {}), sessionsDir: ctx.dirs.sessionsDir };
}
