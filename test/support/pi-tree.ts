import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** pi 0.73.1's directory name for a cwd: `--<path without its first /, / \ : as ->--`. */
export function piDirName(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/**
 * Writes a session file exactly where and how pi lays one out under `sessionsDir`: bucket
 * `--<cwd>--`, name `<ISO time with : . as ->_<uuid>.jsonl`, 8-hex entry ids chained by parentId.
 */
export function writePiSession(
  sessionsDir: string,
  cwd: string,
  options: { id: string; time: string; version?: number; lines?: Array<Record<string, unknown>> },
): string {
  const dir = join(sessionsDir, piDirName(cwd));
  mkdirSync(dir, { recursive: true });
  const header = { type: "session", version: options.version ?? 3, id: options.id, timestamp: options.time, cwd };
  const lines = options.lines ?? [
    {
      type: "message",
      id: "a1b2c3d4",
      parentId: null,
      timestamp: options.time,
      message: { role: "user", content: "hello pi", timestamp: 1 },
    },
    {
      type: "message",
      id: "e5f6a7b8",
      parentId: "a1b2c3d4",
      timestamp: options.time,
      message: { role: "assistant", content: [{ type: "text", text: "hi" }], provider: "p", model: "m", timestamp: 2 },
    },
  ];
  const path = join(dir, `${options.time.replace(/[:.]/g, "-")}_${options.id}.jsonl`);
  writeFileSync(path, `${[header, ...lines].map((l) => JSON.stringify(l)).join("\n")}\n`);
  return path;
}
