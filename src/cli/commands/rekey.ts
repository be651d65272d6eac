import { rekeySessionFile } from "../../maintenance/rekey.ts";
import type { StoreKey } from "../../crypto/line-cipher.ts";
import { readKeyFile } from "../key-source.ts";
import { storeOptions, UsageError, type Command, type CommandContext } from "../context.ts";
import { resolveSessionManagerOptions } from "../../session/session-options.ts";
import { storedRewritesOf } from "../../storage/stored-rewrites.ts";
import { sessionFilesOf } from "../resolve-session.ts";
import { terminalText } from "../terminal-text.ts";

/** A key file option of rekey: required, read as every key file is (key-source.ts). */
function readKeyFileOption(ctx: CommandContext, option: string, file: unknown): StoreKey {
  if (typeof file !== "string" || file.length === 0) throw new UsageError(`rekey needs --${option} <file>`);
  return readKeyFile(ctx.io.cwd, file, `--${option}`, ctx.io.stderr);
}

export const rekeyCommand: Command = {
  name: "rekey",
  summary:
    "re-encrypt encrypted sessions (files, or database sessions with --store) under a new key, each all or nothing " +
    "(keys: files of 32 bytes or 64 hex characters)",
  usage: "rekey <ids…|paths…> --key-file <file> --new-key-file <file>  ($TRANSCRIPT_STORE_KEY_FILE for --key-file)",
  options: { "new-key-file": { type: "string" } },
  minArgs: 1,
  async run(ctx) {
    const from = ctx.key() ?? readKeyFileOption(ctx, "key-file", undefined);
    const to = readKeyFileOption(ctx, "new-key-file", ctx.values["new-key-file"]);
    if (ctx.store !== undefined) return rekeyDatabase(ctx, from, to);
    const files = await sessionFilesOf(ctx, ctx.positionals);
    for (const file of files) {
      const report = await rekeySessionFile(file, { from, to, blobsDir: ctx.dirs.blobsDir });
      ctx.emit(
        { type: "rekeyed", ...report },
        terminalText`rekeyed ${report.path} (${String(report.entries)} entries, key ${report.toKeyId})`,
      );
    }
    return 0;
  },
};

/** `rekey <ids…> --store`: each database session re-encrypted in one transaction under its lease (pg-rekey.ts). */
async function rekeyDatabase(ctx: CommandContext, from: StoreKey, to: StoreKey): Promise<number> {
  const backend = storedRewritesOf(resolveSessionManagerOptions(storeOptions(ctx)).store, "rekey --store");
  if (backend === null) throw new UsageError("rekey --store needs a store (--store URL or TRANSCRIPT_STORE_URL)");
  for (const arg of ctx.positionals) {
    const report = await backend.rekeySession(arg, { from, to });
    ctx.emit({ type: "rekeyed", ...report }, terminalText`rekeyed ${report.id} (${String(report.entries)} entries, key ${report.toKeyId})`);
  }
  return 0;
}
