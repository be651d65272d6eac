import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./child.ts";

/** The version of the `bun` devDependency (package.json), which the smoke test runs the library on. */
export const BUN_VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).devDependencies.bun;

/**
 * The Bun binary the `bun` devDependency installed, or null when there is none that runs and reports
 * BUN_VERSION. Its postinstall moves the platform binary into `bun/bin/bun.exe`; where install scripts
 * were skipped, that file is a placeholder and the binary is still in the platform package. Absent Bun
 * makes its tests skip with one loud line, except under `CI=true` (`.ci/run`, after `npm ci`), where it
 * fails the run instead of silently testing less.
 */
export function bunBinary(): string | null {
  const modules = join(REPO_ROOT, "node_modules");
  const arch = process.arch === "arm64" ? "aarch64" : process.arch;
  const candidates = [join(modules, "bun/bin/bun.exe"), join(modules, `@oven/bun-${process.platform}-${arch}/bin/bun`)];
  const tried: string[] = [];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    try {
      const version = execFileSync(path, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
      if (version === BUN_VERSION) return path;
      tried.push(`${path} is Bun ${version}`);
    } catch (err) {
      tried.push(`${path} does not run: ${(err as Error).message.split("\n")[0]}`);
    }
  }
  const why = `no Bun ${BUN_VERSION} from the bun devDependency (npm ci installs it)${tried.length > 0 ? `: ${tried.join("; ")}` : ""}`;
  if (process.env.CI === "true" || process.env.CI === "1") throw new Error(`CI=true but ${why}`);
  console.warn(`SKIPPED: ${why}; the Bun smoke tests did not run`);
  return null;
}
