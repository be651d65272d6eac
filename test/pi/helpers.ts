import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/temp-dir.ts";

/** A private pi agent dir and blob dir for one test. */
export function piHome() {
  const base = tempDir("ts-pi-");
  return { base, agentDir: join(base, "agent"), blobsDir: join(base, "blobs"), cwd: join(base, "proj") };
}

/** The JSON records of a file's lines. */
export function linesOf(path: string): Array<Record<string, any>> {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

export const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
export const assistant = (text: string) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  provider: "anthropic",
  model: "claude",
  timestamp: 2,
});
