import { resolve } from "node:path";
import { TranscriptStoreError } from "../../errors.ts";
import { io } from "../../io.ts";
import { rekeySessionFile } from "../../maintenance/rekey.ts";
import { keyIdOf, type StoreKey } from "../../session/line-cipher.ts";
import { storeOptions, UsageError, type Command, type CommandContext } from "../context.ts";
import { resolveSessionManagerOptions } from "../../session/session-options.ts";
import { storedRewritesOf } from "../../storage/stored-rewrites.ts";
import { findSessionFiles } from "../find-files.ts";
import { terminalText } from "../terminal-text.ts";

/** A key file: 32 raw bytes, or 64 hex characters (a trailing newline allowed). */
function readKeyFile(cwd: string, file: unknown, option: string): StoreKey {
  if (typeof file !== "string" || file.length === 0) throw new UsageError(`rekey needs --${option} <file>`);
  const bytes = io.readFileSync(resolve(cwd, file));
  const text = bytes.toString("latin1").trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : bytes;
  if (key.length !== 32)
    throw new TranscriptStoreError("INVALID_OPTION", `--${option} ${file}: a key file holds 32 bytes or 64 hex characters`);
  return { key, keyId: keyIdOf(key) };
}

export const rekeyCommand: Command = {
  name: "rekey",
  summary:
    "re-encrypt encrypted sessions (files, or database sessions with --store) under a new key, each all or nothing " +
    "(keys: files of 32 bytes or 64 hex characters)",
  usage: "rekey <paths…|ids… with --store> --key-file <file> --new-key-file <file>",
  options: { "key-file": { type: "string" }, "new-key-file": { type: "string" } },
  minArgs: 1,
  async run(ctx) {
    const from = readKeyFile(ctx.io.cwd, ctx.values["key-file"], "key-file");
    const to = readKeyFile(ctx.io.cwd, ctx.values["new-key-file"], "new-key-file");
    if (ctx.store !== undefined) return rekeyDatabase(ctx, from, to);
    const files = await findSessionFiles(ctx.positionals, ctx.io.cwd);
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
