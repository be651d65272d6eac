import { dirname, join } from "node:path";
import ndjson from "ndjson";
import { errnoCode, TranscriptStoreError } from "../../errors.ts";
import { migrateSession } from "../../format/migrate.ts";
import { isRecord, type SessionHeader } from "../../format/types.ts";
import { ensureDir, FILE_MODE, io } from "../../io.ts";
import { cwdBucket, sessionFileName } from "../../session/paths.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { resolveSessionManagerOptions } from "../../session/session-options.ts";
import type { Command } from "../context.ts";
import { resolveArg } from "./sessions.ts";

export const exportCommand: Command = {
  name: "export",
  summary: "write a session as NDJSON to stdout (images inlined unless --refs)",
  usage: "export <id> [--refs]",
  options: { refs: { type: "boolean", default: false } },
  minArgs: 1,
  maxArgs: 1,
  async run(ctx) {
    const info = await resolveArg(ctx, ctx.positionals[0]!);
    const m = await SessionManager.open(info.path, { sessionsDir: ctx.dirs.sessionsDir, blobsDir: ctx.dirs.blobsDir, layout: ctx.layout, readOnly: true, rehydrate: "lazy", onWarning: (w) => ctx.io.stderr(`warning: ${w.message}\n`) });
    const out = ndjson.stringify();
    const done = new Promise<void>((resolve, reject) => {
      out.on("data", (line: string) => ctx.io.stdout(line));
      out.on("end", resolve);
      out.on("error", reject);
    });
    out.write(m.header);
    for (const entry of m.getEntries()) out.write(ctx.values.refs ? entry : m.rehydrate(entry));
    out.end();
    await done;
    return 0;
  },
};

export const importCommand: Command = {
  name: "import",
  summary: "read a session as NDJSON from stdin into the store (as a new file)",
  usage: "import",
  options: {},
  maxArgs: 0,
  async run(ctx) {
    const records: Array<Record<string, unknown>> = [];
    await new Promise<void>((resolve, reject) => {
      const parser = ndjson.parse({ strict: true });
      parser.on("data", (row: unknown) => records.push(row as Record<string, unknown>));
      parser.on("end", resolve);
      parser.on("error", (err: Error) => reject(new TranscriptStoreError("INVALID_OPTION", `stdin is not NDJSON after record ${records.length}: ${err.message}`)));
      ctx.io.stdin.pipe(parser);
    });
    const [header, ...rest] = records;
    if (!isRecord(header) || header.type !== "session" || typeof header.id !== "string") throw new TranscriptStoreError("BAD_HEADER", "the first NDJSON record must be a session header");
    if (!rest.every((r) => isRecord(r) && typeof r.type === "string")) throw new TranscriptStoreError("INVALID_OPTION", "every record must be an object with a type");
    const migrated = migrateSession(header as SessionHeader, rest.map((record, i) => ({ record, lineIndex: i + 1 })));
    const resolved = resolveSessionManagerOptions({ sessionsDir: ctx.dirs.sessionsDir, blobsDir: ctx.dirs.blobsDir, layout: ctx.layout, rehydrate: "lazy" });
    const created = new Date(Date.parse(migrated.header.timestamp) || Date.now());
    const path = join(resolved.sessionsDir, cwdBucket(migrated.header.cwd || ctx.io.cwd, resolved.layout), sessionFileName(created, migrated.header.id.replace(/[^A-Za-z0-9-]/g, "_")));
    claimNewFile(path);
    let m: SessionManager;
    try {
      m = await SessionManager.startNew(path, migrated.header, resolved, migrated.entries);
    } catch (err) {
      if (io.statSync(path, { throwIfNoEntry: false })?.size === 0) io.rmSync(path, { force: true });
      throw err;
    }
    await m.close();
    ctx.emit({ type: "imported", id: m.sessionId, path, entries: migrated.entries.length }, `imported ${m.sessionId} (${migrated.entries.length} entries)\n${path}`);
    return 0;
  },
};

/**
 * Creates `path` empty and exclusively, so an import can never replace a session that exists (or
 * appears between a check and the write): the atomic rewrite that follows renames over this
 * placeholder only.
 */
function claimNewFile(path: string): void {
  ensureDir(dirname(path));
  try {
    io.closeSync(io.openSync(path, "wx", FILE_MODE));
  } catch (err) {
    if (errnoCode(err) === "EEXIST") throw new TranscriptStoreError("MOVE_FAILED", `a session already exists at ${path}`, { path });
    throw err;
  }
}
