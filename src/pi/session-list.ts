import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isRecord } from "../format/types.ts";
import { isAuxiliarySessionName } from "../session/paths.ts";
import { scanSessionFile } from "../session/session-file-reader.ts";
import type { SessionInfo, SessionListProgress } from "./types.ts";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => isRecord(b) && b.type === "text")
    .map((b) => (b as { text: unknown }).text)
    .join(" ");
}

/** Latest user/assistant activity: the message's own ms timestamp, else its entry's. */
function lastActivity(records: Array<Record<string, unknown>>): number | undefined {
  let last: number | undefined;
  for (const entry of records) {
    const message = entry.message;
    if (entry.type !== "message" || !isRecord(message) || typeof message.role !== "string" || !("content" in message)) continue;
    if (message.role !== "user" && message.role !== "assistant") continue;
    if (typeof message.timestamp === "number") {
      last = Math.max(last ?? 0, message.timestamp);
    } else if (typeof entry.timestamp === "string") {
      const t = new Date(entry.timestamp).getTime();
      if (!Number.isNaN(t)) last = Math.max(last ?? 0, t);
    }
  }
  return last;
}

/**
 * pi's listing record of one file, read whole in chunks (blob refs left unresolved: only texts
 * count). Null when it is not a session. Malformed lines are skipped here and stay in the file.
 */
export async function readPiSessionInfo(path: string): Promise<SessionInfo | null> {
  try {
    const parsed = scanSessionFile(path);
    if (parsed === null || parsed.header === null) return null;
    const header = parsed.header as unknown as Record<string, unknown>;
    const records = parsed.records.map((r) => r.record);
    let messageCount = 0;
    let firstMessage = "";
    let name: string | undefined;
    const texts: string[] = [];
    for (const entry of records) {
      if (entry.type === "session_info") name = typeof entry.name === "string" ? entry.name.trim() || undefined : undefined;
      if (entry.type !== "message") continue;
      messageCount++;
      const message = entry.message;
      if (!isRecord(message) || typeof message.role !== "string" || !("content" in message)) continue;
      if (message.role !== "user" && message.role !== "assistant") continue;
      const text = textOf(message.content);
      if (!text) continue;
      texts.push(text);
      if (!firstMessage && message.role === "user") firstMessage = text;
    }
    const activity = lastActivity(records);
    const headerTime = typeof header.timestamp === "string" ? new Date(header.timestamp).getTime() : NaN;
    const modified =
      activity !== undefined && activity > 0
        ? new Date(activity)
        : !Number.isNaN(headerTime)
          ? new Date(headerTime)
          : (await stat(path)).mtime;
    const info: SessionInfo = {
      path,
      id: header.id as string,
      cwd: typeof header.cwd === "string" ? header.cwd : "",
      name,
      parentSessionPath: header.parentSession as string | undefined,
      created: new Date(header.timestamp as string),
      modified,
      messageCount,
      firstMessage: firstMessage || "(no messages)",
      allMessagesText: texts.join(" "),
    };
    return info;
  } catch {
    return null;
  }
}

async function sessionFilesOf(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir);
    return names.filter((n) => n.endsWith(".jsonl") && !isAuxiliarySessionName(n)).map((n) => join(dir, n));
  } catch {
    return [];
  }
}

function byActivity(infos: SessionInfo[]): SessionInfo[] {
  return infos.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/**
 * Reads each file's info; `onProgress(loaded, total, partial)` after each, `partial` (the infos
 * so far, by activity) on the first, every tenth and the last, as pi publishes them. An aborted
 * `signal` stops it with its reason.
 */
async function infosOf(files: string[], onProgress?: SessionListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
  let loaded = 0;
  const partial: SessionInfo[] = [];
  const infos = await Promise.all(
    files.map(async (file) => {
      signal?.throwIfAborted();
      const info = await readPiSessionInfo(file);
      signal?.throwIfAborted();
      if (info !== null) partial.push(info);
      loaded++;
      const publish = loaded === 1 || loaded % 10 === 0 || loaded === files.length;
      onProgress?.(loaded, files.length, publish ? byActivity([...partial]) : undefined);
      return info;
    }),
  );
  return byActivity(infos.filter((i): i is SessionInfo => i !== null));
}

/** The sessions of one session directory, most recently active first. */
export async function listSessionDir(dir: string, onProgress?: SessionListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
  return infosOf(await sessionFilesOf(dir), onProgress, signal);
}

/** The sessions of every cwd directory under `sessionsRoot`, most recently active first. */
export async function listSessionTree(
  sessionsRoot: string,
  onProgress?: SessionListProgress,
  signal?: AbortSignal,
): Promise<SessionInfo[]> {
  let dirs: string[];
  try {
    dirs = (await readdir(sessionsRoot, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(sessionsRoot, d.name));
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const dir of dirs) files.push(...(await sessionFilesOf(dir)));
  return infosOf(files, onProgress, signal);
}
