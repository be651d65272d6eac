import { sessionFilePaths } from "../session/discovery.ts";
import { readSessionHeader } from "../session/session-file-reader.ts";
import type { CommandContext } from "./context.ts";

/** Encrypted sessions of the file store (their headers name a key): what a reader that does not decrypt leaves out. */
export function encryptedSessionCount(ctx: CommandContext): number {
  if (ctx.store !== undefined) return 0;
  let count = 0;
  for (const path of sessionFilePaths({ sessionsDir: ctx.dirs.sessionsDir })) {
    try {
      if (readSessionHeader(path)?.encryption !== undefined) count++;
    } catch {
      // unreadable here: the command itself reports it
    }
  }
  return count;
}

/**
 * Says on stderr how many encrypted sessions a command did not count (`usage`, `du`, `search`,
 * `index --status`), never a silent omission: "3 encrypted sessions not counted: usage does not read
 * encrypted sessions yet (…)". A key does not change that (these commands do not decrypt), so the line
 * never tells the user to pass one. Returns the count.
 */
export function noteEncryptedSkipped(ctx: CommandContext, command: string): number {
  const count = encryptedSessionCount(ctx);
  if (count === 0) return 0;
  const sessions = `${count} encrypted session${count === 1 ? "" : "s"} not counted`;
  ctx.io.stderr(`${sessions}: ${command} does not read encrypted sessions yet (show, export and fork do, with --key-file)\n`);
  return count;
}
