import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type IndexProgress, resolveSessionIndexOptions } from "../search/session-index.ts";
import type { CommandContext } from "./context.ts";
import { type DrawnBar, startDrawnBar } from "./progress.ts";
import { terminalSafe } from "./terminal-text.ts";

/** What a command hands the index (`onProgress`, absent when nothing is shown) and calls once it is done. */
export interface IndexProgressOutput {
  onProgress?: (progress: IndexProgress) => void;
  stop(): void;
}

/** True when the file tree's index file does not exist yet: the coming refresh is a first build. */
function firstBuild(ctx: CommandContext): boolean {
  if (ctx.store !== undefined) return false; // a database keeps its index itself
  const indexPath = ctx.values.index as string | undefined;
  const resolved = resolveSessionIndexOptions({
    ...(ctx.root !== undefined ? { root: ctx.root } : {}),
    sessionsDir: ctx.dirs.sessionsDir,
    ...(indexPath !== undefined ? { indexPath: resolve(ctx.io.cwd, indexPath) } : {}),
  });
  return !existsSync(resolved.indexPath);
}

/**
 * Progress of an index refresh on stderr: with `--progress` always; on a terminal, without it, only
 * for a first build or a rebuild (a catch-up is quick). A terminal gets a bar (cli-progress, stopped
 * however the run ends), anything else (a pipe, TERM=dumb) a line per percent. Never on stdout.
 */
export function startIndexProgress(ctx: CommandContext, verb: string, rebuild: boolean): IndexProgressOutput {
  const asked = ctx.values.progress === true;
  const io = ctx.io;
  const terminal = io.isTTY && io.env.TERM !== "dumb";
  if (!asked && !(io.isTTY && !ctx.json && (rebuild || firstBuild(ctx)))) return { stop() {} };
  if (!terminal) {
    let shown = -1;
    return {
      onProgress({ filesDone, filesTotal, path }) {
        const percent = Math.floor((100 * (filesDone + 1)) / filesTotal);
        if (percent === shown) return;
        shown = percent;
        io.stderr(`${verb} ${filesDone + 1}/${filesTotal} ${terminalSafe(path)}\n`);
      },
      stop() {},
    };
  }
  let bar: DrawnBar | null = null;
  return {
    onProgress({ filesDone, filesTotal, path }) {
      bar ??= startDrawnBar(verb, filesTotal);
      bar.update(filesDone + 1, path);
    },
    stop() {
      bar?.stop();
    },
  };
}
