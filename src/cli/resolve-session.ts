import { resolve, sep } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { scanSessionFile } from "../session/session-file-reader.ts";
import { readSessionInfo, type SessionInfo } from "../session/session-info.ts";
import { SessionManager } from "../session/session-manager.ts";
import { storeOptions, type CommandContext } from "./context.ts";
import { findSessionFiles } from "./find-files.ts";

/**
 * Resolves a session argument: a path to a `.jsonl` session file (absolute, or relative to the
 * cwd, anywhere), else an id prefix, file-name prefix or file-name id searched in the store (a
 * database store takes ids and id prefixes only).
 */
export async function resolveArg(ctx: CommandContext, arg: string): Promise<SessionInfo> {
  if (ctx.store === undefined && (arg.endsWith(".jsonl") || arg.includes(sep))) {
    const path = resolve(ctx.io.cwd, arg);
    const info = readSessionInfo(path);
    if (info !== null) return info;
    // A file that is there but not a session says why (another agent's transcript, a bad header).
    const scanned = io.statSync(path, { throwIfNoEntry: false })?.isFile() ? scanSessionFile(path) : null;
    if (scanned !== null && scanned.header === null)
      throw new TranscriptStoreError("BAD_HEADER", `Not a session file (${scanned.headerProblem ?? "no header"}): ${path}`, { path });
    if (arg.endsWith(".jsonl")) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No readable session file at ${path}`, { path });
  }
  return SessionManager.resolve(arg, ctx.io.cwd, storeOptions(ctx));
}

/**
 * The session files a path-taking command (`rekey`, `redact`, `verify`, `inline-images`) works on:
 * a file or directory that is there (directories searched, `findSessionFiles`), else an id or id
 * prefix resolved in the store as every other command does (`resolveArg`). An argument shaped like
 * a path (a separator, `.jsonl`) that is not there is a usage error, as before.
 */
export async function sessionFilesOf(ctx: CommandContext, args: readonly string[]): Promise<string[]> {
  const files = new Set<string>();
  for (const arg of args) {
    const pathLike = arg.includes(sep) || arg.endsWith(".jsonl") || arg === "." || arg === "..";
    const there = io.statSync(resolve(ctx.io.cwd, arg), { throwIfNoEntry: false }) !== undefined;
    if (there || pathLike) for (const file of await findSessionFiles([arg], ctx.io.cwd)) files.add(file);
    else files.add((await resolveArg(ctx, arg)).path);
  }
  return [...files].sort();
}
