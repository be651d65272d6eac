import { inlineImagesInFile, type InlineImagesReport } from "../../maintenance/inline-images.ts";
import type { Command } from "../context.ts";
import { findSessionFiles } from "../find-files.ts";
import { sessionFilesOf } from "../resolve-session.ts";
import { terminalText } from "../terminal-text.ts";

/** The way back named where a pi user meets the blob store (migrate --in-place on a pi tree). */
export const PI_IMAGES_WARNING =
  "warning: pi itself reads the blob:sha256: refs these files now hold as image data (the facade and this store read them back);" +
  " the way back to files pi reads, images inline: transcript-store inline-images [paths…]\n";

export const inlineImagesCommand: Command = {
  name: "inline-images",
  summary: "put images back inline in session files, in place (the files pi itself reads; the blob store is kept)",
  usage: "inline-images [ids…|paths…]",
  options: {},
  async run(ctx) {
    const files =
      ctx.positionals.length > 0 ? await sessionFilesOf(ctx, ctx.positionals) : await findSessionFiles([ctx.dirs.sessionsDir], ctx.io.cwd);
    const reports: InlineImagesReport[] = [];
    for (const file of files) {
      const report = await inlineImagesInFile(file, ctx.dirs.blobsDir);
      reports.push(report);
      const text =
        report.status === "failed"
          ? terminalText`failed (${report.code}: ${report.message})  ${file}`
          : terminalText`${report.status} ${report.images} image(s)  ${file}`;
      ctx.emit({ type: "file", ...report }, text);
    }
    const totals = {
      type: "totals",
      files: reports.length,
      inlined: reports.filter((r) => r.status === "inlined").length,
      images: reports.reduce((n, r) => n + r.images, 0),
      failed: reports.filter((r) => r.status === "failed").length,
    };
    ctx.emit(totals, `${totals.images} image(s) inlined in ${totals.inlined} of ${totals.files} file(s); ${totals.failed} failed`);
    return totals.failed > 0 ? 1 : 0;
  },
};
