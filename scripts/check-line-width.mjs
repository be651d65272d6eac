#!/usr/bin/env node
// Fails when a source line is wider than the formatter's line width (biome.json). The formatter
// wraps code; this also catches what it cannot wrap (long string literals and comments).
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

const width = JSON.parse(readFileSync("biome.json", "utf8")).formatter.lineWidth;
const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.ts", "*.mjs"], { encoding: "utf8" })
  .split("\n")
  .filter((f) => f.length > 0 && !f.startsWith("node_modules/"));
let wide = 0;
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    continue; // listed but deleted in the working tree
  }
  text.split("\n").forEach((line, i) => {
    if ([...line].length > width) {
      wide++;
      console.error(`${file}:${i + 1}: ${[...line].length} columns (max ${width})`);
    }
  });
}
if (wide > 0) {
  console.error(`${wide} line(s) wider than ${width} columns`);
  process.exit(1);
}
