import type { CommandContext } from "./context.ts";
import { viewExport } from "./commands/view-export.ts";

/** Writes session `id` in a target format to stdout, or to `output` (a file). Returns the exit code. */
export type ExportTarget = (ctx: CommandContext, id: string, output: string | undefined) => Promise<number>;

/** `export --to <name>`: one line per target format (add a line to add one). */
export const EXPORT_TARGETS: Record<string, ExportTarget> = {
  atif: viewExport("atif"),
  markdown: viewExport("markdown"),
  html: viewExport("html"),
};
