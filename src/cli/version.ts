import { readFileSync } from "node:fs";

/** The package's version, from its package.json (beside src/ and dist/ alike). */
export function packageVersion(): string {
  return JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
}

/** `--version` (or `-V`) anywhere before `--`: before, after or instead of the command, as the other global flags. */
export function askedForVersion(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "--version" || a === "-V");
}
