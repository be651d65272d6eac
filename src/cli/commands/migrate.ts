import { basename, dirname } from "node:path";
import { migrateFile, type MigrateFileReport } from "../../maintenance/migrate-file.ts";
import { migrateFailed, migrateFileText, migrateTotals, migrateTotalsText } from "../../maintenance/migrate-report.ts";
import { formatBytes, UsageError, type Command } from "../context.ts";
import { migrateTo } from "../migrate-to.ts";
import { findSessionFiles } from "../find-files.ts";
import { startProgress } from "../progress.ts";
import { terminalText } from "../terminal-text.ts";
import { redactsOnWrite, writeRedaction } from "../write-redaction.ts";
import { isPiBucketName } from "../../session/paths.ts";
import { PI_IMAGES_WARNING } from "./inline-images.ts";

export const migrateCommand: Command = {
  name: "migrate",
  summary: "bring session files to v3 with images in the blob store (imports into the store by default)",
  usage: "migrate [paths…|ids…] [--in-place] [--backup] [--dry-run] [--redact] [--to <store URL or root dir>]",
  createsStore: true,
  options: {
    to: { type: "string" },
    "in-place": { type: "boolean", default: false },
    backup: { type: "boolean", default: false },
    "dry-run": { type: "boolean", default: false },
    redact: { type: "boolean", default: false },
  },
  async run(ctx) {
    if (typeof ctx.values.to === "string") {
      if (ctx.values["in-place"] || ctx.values.backup || ctx.values["dry-run"] || ctx.values.redact)
        throw new UsageError("--to copies into another store as it is: --in-place, --backup, --dry-run and --redact do not apply");
      return migrateTo(ctx, ctx.values.to);
    }
    const paths = ctx.positionals.length > 0 ? ctx.positionals : [ctx.dirs.sessionsDir];
    const files = await findSessionFiles(paths, ctx.io.cwd);
    const inPlace = ctx.values["in-place"] === true;
    const dryRun = ctx.values["dry-run"] === true;
    // pi itself does not read blob refs: say so, and name the way back, where a pi user meets it.
    const piTree = ctx.layout === "pi" || files.some((f) => isPiBucketName(basename(dirname(f))));
    if (inPlace && !dryRun && piTree) ctx.io.stderr(PI_IMAGES_WARNING);
    const progress = startProgress(ctx.io, files.length, dryRun ? "planning" : "migrating", ctx.json);
    const reports: MigrateFileReport[] = [];
    const plannedBlobs = new Set<string>();
    const redaction = redactsOnWrite(ctx) ? writeRedaction(ctx) : null;
    try {
      for (const file of files) {
        const report = await migrateFile(file, {
          sessionsDir: ctx.dirs.sessionsDir,
          blobsDir: ctx.dirs.blobsDir,
          layout: ctx.layout,
          inPlace,
          backup: ctx.values.backup === true,
          dryRun,
          plannedBlobs,
          ...(redaction === null ? {} : { stages: [redaction.stage] }),
        });
        reports.push(report);
        await progress.tick(basename(file));
      }
    } finally {
      progress.stop();
    }
    for (const r of reports) {
      const text = migrateFileText(r, formatBytes);
      ctx.emit(
        { type: "file", ...r },
        r.target !== r.source ? terminalText`${text}  ${r.source} → ${r.target}` : terminalText`${text}  ${r.source}`,
      );
    }
    const totals = migrateTotals(reports);
    ctx.emit(totals, migrateTotalsText(totals, formatBytes));
    if (redaction !== null) ctx.emit({ type: "redacted", found: Object.fromEntries(redaction.found) }, redaction.describe());
    return migrateFailed(totals) ? 1 : 0;
  },
};
