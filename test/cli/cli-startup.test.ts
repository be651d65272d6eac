import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Preloaded into the child: records every module URL it resolves, printed as JSON on stderr at exit. */
const RECORDER = `
import { registerHooks } from "node:module";
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
process.on("exit", () => process.stderr.write(JSON.stringify([...seen]) + "\\n"));
`;

// Issue 34, start-up: `--version` answers before any command module (or dependency) loads.
describe("transcript-store start-up", () => {
  it("--version loads only the runner, the terminal writer and the version reader", () => {
    expect(existsSync(join(REPO_ROOT, "dist", "cli", "run.js")), "dist/ is built by `npm test` (npm run build)").toBe(true);
    const dir = tempDir("ts-startup-");
    const recorder = join(dir, "recorder.mjs");
    writeFileSync(recorder, RECORDER);
    const run = JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist", "cli", "run.js")).href);
    const child = spawnSync(
      process.execPath,
      [
        "--import",
        pathToFileURL(recorder).href,
        "--input-type=module",
        "-e",
        `const { runCli } = await import(${run}); process.exitCode = await runCli(["--version"]);`,
      ],
      { cwd: REPO_ROOT, encoding: "utf8" },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout).toMatch(/^transcript-store \d+\.\d+\.\d+/);
    const urls = JSON.parse(child.stderr.trim().split("\n").at(-1)!) as string[];
    const distRoot = pathToFileURL(join(REPO_ROOT, "dist")).href;
    expect(
      urls
        .filter((u) => u.startsWith(distRoot))
        .map((u) => u.slice(distRoot.length + 1))
        .sort(),
    ).toEqual(["cli/run.js", "cli/terminal-text.js", "cli/version.js"]);
    expect(urls.filter((u) => u.includes("/node_modules/"))).toEqual([]);
  });

  // (the PostgreSQL backend class still registers at start: storage/builtin-backends.ts)
  it("a command loads its own module only: `ls` loads no other command, no PostgreSQL client, tar or MCP code", () => {
    const urls = loaded(["--root", tempDir("ts-startup-ls-"), "ls", "--all"]);
    const commands = urls.filter((u) => u.includes("/dist/cli/commands/")).map((u) => u.slice(u.lastIndexOf("/") + 1));
    expect(commands).toEqual(["sessions.js"]);
    for (const heavy of ["/node_modules/pg/", "/node_modules/tar", "/node_modules/@modelcontextprotocol/"])
      expect(urls.filter((u) => u.includes(heavy))).toEqual([]);
  });

  it("--help and a mistyped command load no command module; the help's summaries are the commands' own", async () => {
    for (const argv of [["--help"], ["nosuch"]]) expect(loaded(argv).filter((u) => u.includes("/dist/cli/commands/"))).toEqual([]);
    const { COMMAND_TABLE } = await import("../../src/cli/command-table.ts");
    for (const entry of COMMAND_TABLE) {
      const command = await entry.load();
      expect({ name: command.name, summary: command.summary }).toEqual({ name: entry.name, summary: entry.summary });
    }
  });
});

/** The module URLs a fresh CLI process resolves running `argv` (through dist/). */
function loaded(argv: string[]): string[] {
  const dir = tempDir("ts-startup-");
  const recorder = join(dir, "recorder.mjs");
  writeFileSync(recorder, RECORDER);
  const run = JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist", "cli", "run.js")).href);
  const child = spawnSync(
    process.execPath,
    [
      "--import",
      pathToFileURL(recorder).href,
      "--input-type=module",
      "-e",
      `const { runCli } = await import(${run}); process.exitCode = await runCli(${JSON.stringify(argv)});`,
    ],
    { cwd: REPO_ROOT, encoding: "utf8" },
  );
  return JSON.parse(child.stderr.trim().split("\n").at(-1)!) as string[];
}
