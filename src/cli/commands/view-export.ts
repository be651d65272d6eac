import { resolve } from "node:path";
import type { StoreWarning } from "../../errors.ts";
import { exportSession, type ViewFormat } from "../../interchange/export-session.ts";
import { printWarning, storeOptions, type CommandContext } from "../context.ts";
import type { ExportTarget } from "../export-targets.ts";
import { writeNewOutput } from "../output-file.ts";

/** Rehydration warnings that mean an image could not be shown (its blob is missing or damaged). */
const NOT_SHOWN = new Set(["BLOB_MISSING", "BLOB_CORRUPT", "INVALID_BLOB_REF"]);

/**
 * `export <id> --to atif|markdown|html [-o file] [--branch <entryId>] [--no-redact]`: the session (one
 * branch; secrets redacted unless --no-redact) to stdout, or to a new file (`OUTPUT_EXISTS` when the
 * name is taken; nothing written). Exit 1 when an image could not be read back from the blob store
 * (the export holds its ref instead).
 */
export function viewExport(format: ViewFormat): ExportTarget {
  return async (ctx: CommandContext, id: string, output: string | undefined): Promise<number> => {
    const branch = ctx.values.branch as string | undefined;
    let missing = 0;
    const print = printWarning(ctx.io);
    const onWarning = (w: StoreWarning) => {
      if (NOT_SHOWN.has(w.code)) missing++;
      print(w);
    };
    const redactOutput = ctx.values["no-redact"] !== true;
    const chunks = exportSession(id, {
      ...storeOptions(ctx),
      format,
      onWarning,
      redactOutput,
      ...(branch === undefined ? {} : { branch }),
    });
    if (output !== undefined) await writeNewOutput(resolve(ctx.io.cwd, output), chunks, { force: ctx.values.force === true });
    else {
      // The export is data: byte-exact on a pipe (controls made visible only on a terminal).
      const write = ctx.io.records ?? ctx.io.stdout;
      for await (const chunk of chunks) write(chunk);
    }
    if (missing > 0) {
      ctx.io.stderr(`transcript-store: ${missing} image(s) could not be read from the blob store; the export shows their refs\n`);
      return 1;
    }
    return 0;
  };
}
