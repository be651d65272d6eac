import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** The fixtures the demo copies: every bundled session but the garbage-header one. */
const DEMO_FIXTURES = readdirSync(join(REPO_ROOT, "fixtures", "sessions"))
  .filter((n) => n.endsWith(".jsonl") && !n.includes("garbage"))
  .sort();

describe("transcript-store demo, run from the packed package", () => {
  it("copies every bundled fixture from the package (not the cwd) and exits 0", () => {
    expect(existsSync(join(REPO_ROOT, "dist", "cli", "run.js")), "dist/ is built by `npm test` (npm run build)").toBe(true);
    const packDir = tempDir("ts-pack-demo-");
    execFileSync(NPM, ["pack", "--ignore-scripts", "--pack-destination", packDir], { cwd: REPO_ROOT, stdio: "ignore" });
    const tarball = readdirSync(packDir).find((n) => n.endsWith(".tgz"))!;
    // the tarball's tree, as an install lays it out; its dependencies come from this checkout (offline, fast)
    execFileSync("tar", ["-xzf", join(packDir, tarball), "-C", packDir]);
    const installed = join(packDir, "package");
    symlinkSync(join(REPO_ROOT, "node_modules"), join(installed, "node_modules"), "dir");

    // an unrelated working directory: nothing may be looked up relative to it
    const elsewhere = tempDir("ts-demo-cwd-");
    const run = spawnSync(process.execPath, [join(installed, "bin", "transcript-store.mjs"), "demo", "--json"], {
      cwd: elsewhere,
      encoding: "utf8",
    });
    expect(run.stderr).not.toMatch(/ENOENT/);
    expect(run.status, run.stderr).toBe(0);
    const record = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as {
      type: string;
      files: { source: string; status: string }[];
      findingsAfter: number;
    };
    expect(record.type).toBe("demo");
    expect(record.files.map((f) => f.source.split(/[\\/]/).at(-1)).sort()).toEqual(DEMO_FIXTURES);
    expect(record.files.every((f) => f.status === "imported")).toBe(true);
    expect(record.findingsAfter).toBe(0);
    expect(readdirSync(elsewhere)).toEqual([]);

    // a package whose fixtures were stripped says so with a code, not with an ENOENT on a store directory
    rmSync(join(installed, "fixtures"), { recursive: true, force: true });
    const stripped = spawnSync(process.execPath, [join(installed, "bin", "transcript-store.mjs"), "demo"], {
      cwd: elsewhere,
      encoding: "utf8",
    });
    expect(stripped.status).toBe(1);
    expect(stripped.stderr).not.toMatch(/ENOENT/);
    expect(stripped.stderr).toMatch(/SESSION_NOT_FOUND.*fixture/);
  }, 120_000);
});
