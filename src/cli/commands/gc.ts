import { resolve } from "node:path";
import { forgetReferrers } from "../../blob/blob-referrers.ts";
import { collectGarbage, DEFAULT_GC_GRACE_MS } from "../../maintenance/gc.ts";
import { gcDatabase } from "../database.ts";
import { formatBytes, UsageError, type Command } from "../context.ts";
import { terminalText } from "../terminal-text.ts";

/** `90s`, `15m`, `1h`, `2d` or milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new UsageError(`bad duration ${JSON.stringify(text)} (e.g. 30m, 1h, 0)`);
  const unit = { ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 }[(m[2] ?? "ms") as "ms"];
  return Number(m[1]) * unit;
}

export const gcCommand: Command = {
  name: "gc",
  summary: "delete blobs no session, quarantine or backup file references (older than the grace period)",
  usage: "gc [--dry-run] [--grace 1h] [--also <sessions-root>…] [--forget <registered-place>…]",
  options: {
    "dry-run": { type: "boolean", default: false },
    grace: { type: "string" },
    also: { type: "string", multiple: true },
    forget: { type: "string", multiple: true },
  },
  maxArgs: 0,
  readOnly: (values) => values["dry-run"] === true,
  mustExist: ["blobs-dir", "also"],
  async run(ctx) {
    const graceMs = typeof ctx.values.grace === "string" ? parseDuration(ctx.values.grace) : DEFAULT_GC_GRACE_MS;
    if (ctx.store !== undefined) return gcDatabase(ctx, graceMs);
    const also = ((ctx.values.also as string[] | undefined) ?? []).map((p) => resolve(ctx.io.cwd, p));
    const forget = ((ctx.values.forget as string[] | undefined) ?? []).map((p) => resolve(ctx.io.cwd, p));
    if (forget.length > 0) {
      const removed = forgetReferrers(ctx.dirs.blobsDir, forget);
      for (const place of forget) {
        const known = removed.some((r) => r.path === place);
        ctx.emit(
          { type: known ? "forgot" : "not-registered", path: place },
          terminalText`${known ? "forgot" : "not registered"}: ${place}`,
        );
      }
      if (removed.length < forget.length) return 1;
    }
    const report = await collectGarbage({
      sessionRoots: [ctx.dirs.sessionsDir, ...also],
      blobsDir: ctx.dirs.blobsDir,
      graceMs,
      dryRun: ctx.values["dry-run"] === true,
    });
    for (const hash of report.deleted)
      ctx.emit(
        { type: report.dryRun ? "would-delete" : "deleted", hash },
        terminalText`${report.dryRun ? "would delete" : "deleted"} ${hash}`,
      );
    const { deleted, places, ...totals } = report;
    ctx.emit(
      { type: "summary", ...totals, places, deleted: deleted.length },
      `${places.length} place(s) and ${report.filesScanned} file(s) scanned, ` +
        `${report.referenced} blob(s) referenced of ${report.blobs}; ` +
        `${report.dryRun ? "would delete" : "deleted"} ${deleted.length} (${formatBytes(report.bytesFreed)}), ` +
        `kept ${report.keptYoung} younger than the grace period` +
        (report.lockFilesRemoved > 0
          ? `; ${report.dryRun ? "would remove" : "removed"} the lock files of ${report.lockFilesRemoved} writer(s) never closed`
          : ""),
    );
    return 0;
  },
};
