import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./child.ts";

/**
 * A path in the data shared beside the repository (`../shared/<relative>`, or
 * `$TRANSCRIPT_STORE_SHARED/<relative>`), or null when it is absent. Absent data makes its tests
 * skip with one loud line, except under `CI=true`, where the data is always present: there its
 * absence fails the run instead of silently testing less.
 */
export function sharedData(relative: string): string | null {
  const base = process.env.TRANSCRIPT_STORE_SHARED ?? join(REPO_ROOT, "..", "shared");
  const path = join(base, relative);
  if (existsSync(path)) return path;
  if (process.env.CI === "true" || process.env.CI === "1") {
    throw new Error(`CI=true but the shared test data is missing: ${path}`);
  }
  console.warn(`SKIPPED: shared test data not found at ${path}; the tests that need it did not run`);
  return null;
}
