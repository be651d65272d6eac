// The Node version the package needs (package.json `engines.node`, a `>=X.Y[.Z]` range) and whether
// this runtime has it. Plain JavaScript that any Node parses: it runs before anything that needs a newer one.
import { readFileSync } from "node:fs";

/** `engines.node` of the package, e.g. ">=22.19". */
export function requiredNode() {
  return JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines.node;
}

/** Whether `version` ("22.23.3" or "v22.23.3") satisfies `range` (">=22.19"). */
export function satisfies(version, range) {
  const want = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (want === null) return true; // a range this check does not read is left to npm
  const have = version.replace(/^v/, "").split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const w = Number(want[i + 1] ?? 0);
    if ((have[i] ?? 0) !== w) return (have[i] ?? 0) > w;
  }
  return true;
}
