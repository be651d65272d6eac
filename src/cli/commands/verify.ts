import { verifySessionFile, findOrphanedArtifactDirs, bucketDirsOf, type Finding } from "../../maintenance/verify.ts";
import { UsageError, type Command } from "../context.ts";
import { verifyDatabase } from "../database.ts";
import { bucketDirs, findSessionFiles } from "../find-files.ts";
import { sessionFilesOf } from "../resolve-session.ts";
import { startProgress } from "../progress.ts";
import { terminalText } from "../terminal-text.ts";
import { basename, resolve } from "node:path";

export const verifyCommand: Command = {
  name: "verify",
  readOnly: true,
  summary: "check headers, lines, tails, parent links, blobs and artifact directories",
  usage: "verify [ids…|paths…] [--no-rehash]",
  options: { "no-rehash": { type: "boolean", default: false } },
  async run(ctx) {
    if (ctx.store !== undefined) {
      if (ctx.positionals.length > 0) throw new UsageError("verify of a database store checks all of it (no paths)");
      return verifyDatabase(ctx);
    }
    const paths = ctx.positionals.length > 0 ? ctx.positionals : [ctx.dirs.sessionsDir];
    const files =
      ctx.positionals.length > 0 ? await sessionFilesOf(ctx, ctx.positionals) : await findSessionFiles([ctx.dirs.sessionsDir], ctx.io.cwd);
    const findings: Finding[] = [];
    const checked = new Map();
    const progress = startProgress(ctx.io, files.length, "verifying", ctx.json);
    let entries = 0;
    const unchecked: Array<{ path: string; message: string }> = [];
    try {
      for (const file of files) {
        const result = verifySessionFile(file, { blobsDir: ctx.dirs.blobsDir, rehash: ctx.values["no-rehash"] !== true }, checked);
        entries += result.entries;
        findings.push(...result.findings);
        if (result.unchecked !== undefined) unchecked.push({ path: file, message: result.unchecked });
        await progress.tick(basename(file));
      }
    } finally {
      progress.stop();
    }
    findings.push(
      ...findOrphanedArtifactDirs(files, [...new Set([...bucketDirsOf(files), ...bucketDirs(paths.map((p) => resolve(ctx.io.cwd, p)))])]),
    );
    for (const f of findings)
      ctx.emit({ type: "finding", ...f }, terminalText`${f.kind.padEnd(18)} ${f.path}${f.line ? `:${f.line}` : ""}  ${f.message}`);
    for (const u of unchecked) ctx.emit({ type: "unchecked", ...u }, terminalText`${"UNCHECKED".padEnd(18)} ${u.path}  ${u.message}`);
    ctx.emit(
      { type: "summary", files: files.length, entries, findings: findings.length },
      `${files.length} file(s), ${entries} entries, ${findings.length} finding(s)`,
    );
    return findings.length > 0 ? 1 : 0;
  },
};
