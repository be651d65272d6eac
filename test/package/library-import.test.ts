import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Preloaded into the child: records every module URL it resolves and prints them as JSON on exit. */
const RECORDER = `
import { registerHooks } from "node:module";
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
process.on("exit", () => process.stdout.write(JSON.stringify([...seen]) + "\\n"));
`;

/** The CLI's dependencies, and the PostgreSQL driver. */
const HEAVY = ["cli-progress", "ndjson", "fast-glob", "pg"];

/** Runs `body` (an ES module) in a fresh Node and returns the npm packages and dist/ modules it loaded. */
function loadedBy(body: string): { packages: string[]; dist: string[] } {
  const dir = tempDir("ts-import-");
  const recorder = join(dir, "recorder.mjs");
  writeFileSync(recorder, RECORDER);
  const run = spawnSync(process.execPath, ["--import", pathToFileURL(recorder).href, "--input-type=module", "-e", body], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  expect(run.status, run.stderr).toBe(0);
  const urls = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as string[];
  const packages = new Set<string>();
  for (const url of urls) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) packages.add(m[1]!);
  }
  const distRoot = pathToFileURL(join(REPO_ROOT, "dist")).href;
  const dist = urls.filter((u) => u.startsWith(distRoot)).map((u) => u.slice(distRoot.length + 1));
  return { packages: [...packages].sort(), dist };
}

const INDEX = JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist", "index.js")).href);

describe("importing the library", () => {
  it.each(["index.js", "pi/index.js", "pi/agent.js"])(
    "%s loads neither the CLI nor its dependencies nor the PostgreSQL driver",
    (entry) => {
      expect(existsSync(join(REPO_ROOT, "dist", entry)), "dist/ is built by `npm test` (npm run build)").toBe(true);
      const url = JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist", entry)).href);
      const { packages, dist } = loadedBy(
        `const lib = await import(${url}); if (typeof lib.SessionManager !== "function") process.exit(3);`,
      );
      expect(dist).toContain(entry);
      for (const name of HEAVY) expect(packages, name).not.toContain(name);
      // the one CLI module the root entry loads is the shim that loads the CLI when `main` is called
      expect(dist.filter((m) => m.startsWith("cli/") && m !== "cli/load-main.js")).toEqual([]);
    },
  );

  it("conformance/index.js (the published suite) loads neither the CLI nor its dependencies nor the PostgreSQL driver", () => {
    const url = JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist", "conformance", "index.js")).href);
    const { packages, dist } = loadedBy(`const s = await import(${url}); if (typeof s.runConformance !== "function") process.exit(3);`);
    expect(dist).toContain("conformance/index.js");
    for (const name of HEAVY) expect(packages, name).not.toContain(name);
    expect(dist.filter((m) => m.startsWith("cli/") && m !== "cli/load-main.js")).toEqual([]);
  });

  it("loads the CLI when `main` runs, and the driver when a PostgreSQL store connects", () => {
    const cli = loadedBy(
      `const { main } = await import(${INDEX});` +
        "let out = ''; const code = await main(['--help'], { stdout: (t) => (out += t), stderr: () => {} });" +
        "if (code !== 0 || !out.includes('transcript-store')) process.exit(3);",
    );
    // `--help` loads the CLI's entry and no command (src/cli/command-table.ts); no CLI package it does not need
    expect(cli.dist).toContain("cli/main.js");
    expect(cli.packages).not.toContain("cli-progress");
    const ls = loadedBy(
      `const { main } = await import(${INDEX});` +
        "const io = { stdout: () => {}, stderr: () => {}, env: {}, cwd: process.cwd(), stdin: process.stdin, isTTY: false };" +
        "const code = await main(['ls', '--all', '--root', '/nonexistent-root-for-this-test'], io);" +
        "if (code !== 2) process.exit(3);",
    );
    expect(ls.dist).toContain("cli/commands/sessions.js");

    // nothing listens on port 1: the connect fails, after the driver was loaded to try
    const pg = loadedBy(
      `const { PgStore } = await import(${INDEX});` +
        "try { await PgStore.connect('postgres://127.0.0.1:1/none', { maxConnections: 1 }); process.exit(4); } catch { }",
    );
    expect(pg.packages).toContain("pg");
    expect(pg.packages).not.toContain("cli-progress");
  });
});
