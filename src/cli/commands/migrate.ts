import { basename } from "node:path";
import { migrateFile, type MigrateFileReport } from "../../maintenance/migrate-file.ts";
import { formatBytes, type Command } from "../context.ts";
import { findSessionFiles } from "../find-files.ts";
import { startProgress } from "../progress.ts";

export const migrateCommand: Command = {
  name: "migrate",
  summary: "bring session files to v3 with images in the blob store (imports into the store by default)",
  usage: "migrate [paths…] [--in-place] [--backup] [--dry-run]",
  options: { "in-place": { type: "boolean", default: false }, backup: { type: "boolean", default: false }, "dry-run": { type: "boolean", default: false } },
  async run(ctx) {
    const paths = ctx.positionals.length > 0 ? ctx.positionals : [ctx.dirs.sessionsDir];
    const files = await findSessionFiles(paths, ctx.io.cwd);
    const inPlace = ctx.values["in-place"] === true;
    const dryRun = ctx.values["dry-run"] === true;
    const progress = startProgress(ctx.io, files.length, dryRun ? "planning" : "migrating", ctx.json);
    const reports: MigrateFileReport[] = [];
    try {
      for (const file of files) {
        const report = await migrateFile(file, { sessionsDir: ctx.dirs.sessionsDir, blobsDir: ctx.dirs.blobsDir, layout: ctx.layout, inPlace, backup: ctx.values.backup === true, dryRun });
        reports.push(report);
        progress.tick(basename(file));
      }
    } finally {
      progress.stop();
    }
    for (const r of reports) {
      const what = r.error !== undefined ? `${r.status}: ${r.error.code} ${r.error.message}` : `${r.status} v${r.fromVersion ?? "?"}→v3 ${formatBytes(r.bytesBefore)}→${formatBytes(r.bytesAfter)} images ${r.imagesExternalized}${r.imagesKeptInline ? ` (${r.imagesKeptInline} not base64, kept inline)` : ""} blobs ${r.blobsNew} new/${r.blobsDeduplicated} dedup${r.blobsRepaired ? `/${r.blobsRepaired} repaired` : ""}${r.malformed ? ` malformed ${r.malformed}` : ""}${r.linesSplit ? ` glued lines split ${r.linesSplit}` : ""}${r.tornTail ? " torn tail repaired" : ""}`;
      ctx.emit({ type: "file", ...r }, `${what}  ${r.source}${r.target !== r.source ? ` → ${r.target}` : ""}`);
    }
    const sum = (k: "bytesBefore" | "bytesAfter" | "imagesExternalized" | "blobsNew" | "blobsDeduplicated" | "blobsRepaired") => reports.reduce((a, r) => a + r[k], 0);
    const failed = reports.filter((r) => r.status === "failed" || r.status === "conflict").length;
    const count = (...statuses: MigrateFileReport["status"][]) => reports.filter((r) => statuses.includes(r.status)).length;
    const totals = { type: "totals", files: reports.length, migrated: count("migrated", "imported", "updated"), current: count("current"), continued: count("continued"), conflicts: count("conflict"), planned: reports.filter((r) => r.status === "planned").length, failed, bytesBefore: sum("bytesBefore"), bytesAfter: sum("bytesAfter"), imagesExternalized: sum("imagesExternalized"), blobsNew: sum("blobsNew"), blobsDeduplicated: sum("blobsDeduplicated"), blobsRepaired: sum("blobsRepaired") };
    const continued = totals.continued ? `${totals.continued} continued in the store (left alone), ` : "";
    const conflicts = totals.conflicts ? `${totals.conflicts} in conflict (store copy left alone), ` : "";
    ctx.emit(totals, `${totals.files} file(s): ${totals.migrated} migrated, ${totals.current} already current, ${continued}${conflicts}${totals.planned} planned, ${failed} failed; ${formatBytes(totals.bytesBefore)} → ${formatBytes(totals.bytesAfter)}; ${totals.imagesExternalized} image(s) externalized, ${totals.blobsNew} new blob(s), ${totals.blobsDeduplicated} deduplicated${totals.blobsRepaired ? `, ${totals.blobsRepaired} corrupt blob(s) repaired` : ""}`);
    return failed > 0 ? 1 : 0;
  },
};
