import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { TranscriptStoreError } from "../../errors.ts";
import { isBlobHash } from "../../blob/blob-ref.ts";
import { collectGarbage } from "../../maintenance/gc.ts";
import { migrateFile } from "../../maintenance/migrate-file.ts";
import { verifySessionFile } from "../../maintenance/verify.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { formatBytes, formatTable, type Command } from "../context.ts";
import { startProgress } from "../progress.ts";
import { terminalText } from "../terminal-text.ts";

/**
 * The bundled fixtures the demo works on (a garbage-header file is left out: it is never touched anyway),
 * found beside this module (src/ in a clone, dist/ in the installed package; package.json `files` ships
 * them), never through the working directory.
 */
export const FIXTURES_DIR = join(import.meta.dirname, "../../../fixtures/sessions");

/** The fixture file names the demo copies, sorted; throws when the package came without them. */
function demoFixtures(): string[] {
  const names = existsSync(FIXTURES_DIR)
    ? readdirSync(FIXTURES_DIR)
        .filter((n) => n.endsWith(".jsonl") && !n.includes("garbage") && !n.includes("bad-header"))
        .sort()
    : [];
  if (names.length === 0) {
    throw new TranscriptStoreError(
      "SESSION_NOT_FOUND",
      `the demo's fixture sessions are missing from ${FIXTURES_DIR} (an incomplete install? reinstall transcript-store)`,
    );
  }
  return names;
}

export const demoCommand: Command = {
  name: "demo",
  summary: "migrate, verify, resume, fork, move and gc the bundled legacy fixtures in a temporary store",
  usage: "demo [--keep]",
  createsStore: true,
  options: { keep: { type: "boolean", default: false } },
  maxArgs: 0,
  async run(ctx) {
    const started = performance.now();
    const names = demoFixtures();
    const root = mkdtempSync(join(tmpdir(), "transcript-store-demo-"));
    const legacy = join(root, "legacy-sessions");
    const sessionsDir = join(root, "sessions");
    const blobsDir = join(root, "blobs");
    try {
      mkdirSync(legacy, { mode: 0o700 });
      for (const name of names) copyFileSync(join(FIXTURES_DIR, name), join(legacy, name));
      const say = (text: string) => ctx.io.stdout(ctx.json ? "" : `${text}\n`);
      say(terminalText`transcript-store demo — ${names.length} legacy fixture sessions copied to ${root}\n`);

      const before = names.map((n) => verifySessionFile(join(legacy, n), { blobsDir }));
      const damaged = before.filter((r) => r.findings.length > 0).length;
      say(
        `1. verify before: ${before.reduce((a, r) => a + r.findings.length, 0)} finding(s) in ${damaged} file(s) ` +
          "(torn tails, malformed lines) — nothing is dropped, they go to quarantine",
      );

      const progress = startProgress(ctx.io, names.length, "migrating", ctx.json);
      const reports = [];
      for (const name of names) {
        reports.push(await migrateFile(join(legacy, name), { sessionsDir, blobsDir }));
        await progress.tick(name);
      }
      progress.stop();
      const rows = reports.map((r) => [
        basename(r.source),
        r.fromVersion === null ? "?" : `v${r.fromVersion}`,
        formatBytes(r.bytesBefore),
        formatBytes(r.bytesAfter),
        String(r.imagesExternalized),
        `${r.blobsNew}/${r.blobsDeduplicated}`,
        r.status === "failed" ? `failed: ${r.error?.code}` : r.status,
      ]);
      const failed = reports.filter((r) => r.status === "failed").length;
      say(terminalText`2. migrate: imported into ${sessionsDir}\n`);
      say(formatTable(["file", "from", "before", "after", "images", "blobs new/dedup", "status"], rows));
      const totalBefore = reports.reduce((a, r) => a + r.bytesBefore, 0);
      const totalAfter = reports.reduce((a, r) => a + r.bytesAfter, 0);
      const blobNames = (existsSync(blobsDir) ? readdirSync(blobsDir) : []).filter((name) => isBlobHash(name));
      const blobBytes = blobNames.reduce((a, h) => a + statSync(join(blobsDir, h)).size, 0);
      say(
        `\n   total ${formatBytes(totalBefore)} → ${formatBytes(totalAfter)} of transcript, ` +
          `${blobNames.length} blob(s) (${formatBytes(blobBytes)})`,
      );

      const after = reports.filter((r) => r.status !== "failed").map((r) => verifySessionFile(r.target, { blobsDir }));
      const findingsAfter = after.reduce((a, r) => a + r.findings.length, 0);
      say(`3. verify after: ${after.length} file(s), ${findingsAfter} finding(s)`);

      const all = await SessionManager.listAll({ sessionsDir, blobsDir });
      const pick = all.find((s) => s.messageCount > 2) ?? all[0];
      let forkId = "-";
      let movedTo = "-";
      if (pick) {
        const resumed = await SessionManager.open(pick.path, { sessionsDir, blobsDir });
        resumed.appendMessage({ role: "user", content: "resumed by the demo" });
        const fork = await resumed.fork();
        fork.appendMessage({ role: "user", content: "a run forked from the checkpoint" });
        forkId = fork.sessionId;
        await fork.moveTo(join(root, "moved-project"));
        movedTo = fork.sessionFile ?? "-";
        await fork.close();
        await resumed.close();
        say(
          terminalText`4. resumed ${pick.id} (${resumed.getEntries().length} entries), forked it as ${forkId}, ` +
            terminalText`moved the fork to ${join(root, "moved-project")}`,
        );
      }
      const gc = await collectGarbage({ sessionRoots: [sessionsDir], blobsDir, graceMs: 0, dryRun: true });
      say(`5. gc --dry-run: ${gc.referenced} of ${gc.blobs} blob(s) referenced, ${gc.deleted.length} would be deleted`);
      const kept = ctx.values.keep ? terminalText`; store kept at ${root}` : "";
      say(`\ndone in ${((performance.now() - started) / 1000).toFixed(1)} s${kept}`);
      if (ctx.json)
        ctx.emit(
          {
            type: "demo",
            files: reports,
            findingsBefore: before.reduce((a, r) => a + r.findings.length, 0),
            findingsAfter,
            fork: forkId,
            movedTo,
            gc: { ...gc, deleted: gc.deleted.length },
          },
          "",
        );
      return failed === 0 && findingsAfter === 0 ? 0 : 1;
    } finally {
      if (!ctx.values.keep) rmSync(root, { recursive: true, force: true });
    }
  },
};
