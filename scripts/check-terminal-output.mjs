#!/usr/bin/env node
// Fails when code of the library or CLI (src/, bin/) writes to the terminal other than through the
// CLI's one writer (src/cli/terminal-text.ts, wrapped around the streams by `main`): a direct
// console.* or process.stdout/stderr would print transcript text with its control characters raw.
// Allowed: src/cli/run.ts binds the process streams to the writer; src/cli/progress.ts hands
// process.stderr to the progress bar, which draws with its own sequences (its label is escaped);
// bin/transcript-store.mjs prints one line on a too-old Node, before the writer can load (version text only).
// Usage: check-terminal-output.mjs [files…] (default: the tracked and new files under src/ and bin/).
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

const ALLOWED = new Set(["src/cli/run.ts", "src/cli/progress.ts", "bin/transcript-store.mjs"]);
const DIRECT = /\bconsole\s*\.|\bprocess\s*\.\s*(stdout|stderr)\b/;

const given = process.argv.slice(2);
const files =
  given.length > 0
    ? given
    : execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "src", "bin"], { encoding: "utf8" })
        .split("\n")
        .filter((f) => /\.(ts|mjs|js)$/.test(f));
let direct = 0;
for (const file of files) {
  if (ALLOWED.has(file)) continue;
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    continue; // listed but deleted in the working tree
  }
  text.split("\n").forEach((line, i) => {
    const code = /^\s*(\*|\/\*)/.test(line) ? "" : line.replace(/\/\/.*$/, ""); // not in comments
    if (DIRECT.test(code)) {
      direct++;
      console.error(`${file}:${i + 1}: writes to the terminal directly; print through ctx.emit / ctx.io (src/cli/terminal-text.ts)`);
    }
  });
}
if (direct > 0) {
  console.error(`${direct} direct terminal write(s)`);
  process.exit(1);
}
