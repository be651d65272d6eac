import { setSessionEncryption, type SetEncryptionReport } from "../../maintenance/encrypt-file.ts";
import { TranscriptStoreError } from "../../errors.ts";
import { defaultRoot } from "../../session/paths.ts";
import { writeStoreSetting } from "../../session/store-settings.ts";
import { type Command, UsageError } from "../context.ts";
import { findSessionFiles } from "../find-files.ts";
import { KEY_FILE_ENV } from "../key-source.ts";
import { sessionFilesOf } from "../resolve-session.ts";
import { terminalText } from "../terminal-text.ts";

/** `encrypt` / `decrypt`: each session all or nothing; without ids every session, and the store setting with it. */
function encryptionCommand(mode: "encrypt" | "decrypt"): Command {
  const done = mode === "encrypt" ? "encrypted" : "decrypted";
  return {
    name: mode,
    summary:
      mode === "encrypt"
        ? "encrypt sessions under the store key (--key-file), their images and artifacts too, each all or nothing; " +
          "without ids: every session, and new sessions are encrypted from now on (config.json encrypt: true)"
        : "decrypt sessions back to clear text (--key-file), their images and artifacts too, each all or nothing; " +
          "without ids: every session, and new sessions are written in clear again (config.json encrypt: false)",
    usage: `${mode} [ids…|paths…] --key-file <file>`,
    options: {},
    async run(ctx) {
      if (ctx.store !== undefined) throw new UsageError(`${mode}: the file store only for now (a database store: rekey --store)`);
      const key = ctx.key();
      if (key === null)
        throw new TranscriptStoreError("KEY_REQUIRED", `${mode} needs the store key: --key-file <file> (or $${KEY_FILE_ENV})`);
      const all = ctx.positionals.length === 0;
      const files = all ? await findSessionFiles([ctx.dirs.sessionsDir], ctx.io.cwd) : await sessionFilesOf(ctx, ctx.positionals);
      let failed = 0;
      let changed = 0;
      let images = 0;
      for (const file of files) {
        let report: SetEncryptionReport;
        try {
          report = await setSessionEncryption(file, mode, { key, blobsDir: ctx.dirs.blobsDir });
        } catch (err) {
          if (!(err instanceof TranscriptStoreError)) throw err;
          failed++;
          ctx.emit(
            { type: "failed", path: file, code: err.code, message: err.message },
            terminalText`failed     ${file}  ${err.code}: ${err.message}`,
          );
          continue;
        }
        if (report.status !== "unchanged") changed++;
        images += report.blobs;
        const counts = `${report.entries} entries, ${report.blobs} image(s), ${report.artifacts} artifact(s)`;
        ctx.emit({ type: report.status, ...report }, terminalText`${report.status.padEnd(10)} ${report.path}  (${counts})`);
      }
      if (all && failed === 0) writeStoreSetting(ctx.root ?? defaultRoot(), "encrypt", mode === "encrypt");
      const setting = all && failed === 0 ? `; new sessions ${mode === "encrypt" ? "are encrypted" : "are written in clear"}` : "";
      if (mode === "encrypt" && images > 0)
        ctx.io.stderr("the images' clear copies stay in the blob store until gc takes them (gc --grace 0: now)\n");
      ctx.emit(
        { type: "summary", [done]: changed, unchanged: files.length - changed - failed, failed, setting: all && failed === 0 },
        `${changed} session(s) ${done}, ${files.length - changed - failed} already so, ${failed} failed${setting}`,
      );
      return failed > 0 ? 1 : 0;
    },
  };
}

export const encryptCommand = encryptionCommand("encrypt");
export const decryptCommand = encryptionCommand("decrypt");
