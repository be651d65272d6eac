import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { REPO_ROOT } from "../support/child.ts";
import { cliProcess } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const text = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const run = await cliProcess(argv, { env });
  return { code: run.code, stdout: run.stdout.toString("utf8"), stderr: run.stderr.toString("utf8") };
};

const COMMANDS = [
  "migrate",
  "verify",
  "gc",
  "ls",
  "show",
  "export",
  "import",
  "inline-images",
  "fork",
  "mv",
  "stats",
  "du",
  "usage",
  "search",
  "index",
  "demo",
  "rekey",
];

async function oneSession(sessionsDir?: string) {
  const root = tempDir();
  const m = await SessionManager.create(join(root, "proj"), sessionsDir ? { sessionsDir, blobsDir: join(root, "blobs") } : { root });
  m.appendMessage({ role: "user", content: [{ type: "text", text: "hi" }] });
  await m.close();
  return { root, id: m.sessionId, cwd: join(root, "proj") };
}

describe("CLI conventions", () => {
  it("--version prints the package's version (before, after or instead of a command)", async () => {
    const version = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version;
    for (const argv of [["--version"], ["-V"], ["ls", "--version"], ["gc", "-V"], ["--root", "/nowhere", "ls", "--version"]]) {
      const run = await text(argv);
      expect(run, argv.join(" ")).toEqual({ code: 0, stdout: `transcript-store ${version}\n`, stderr: "" });
    }
  }, 30_000);

  it("a mistyped command or option gets one line of our own, a 'did you mean', and exit 2", async () => {
    const cases: Array<[string[], string]> = [
      [["verfy"], 'transcript-store: unknown command "verfy" (did you mean "verify"?)\n'],
      [["xyzzy"], 'transcript-store: unknown command "xyzzy" (try --help)\n'],
      [["ls", "--al"], "transcript-store: ls: unknown option --al (did you mean --all?)\n"],
      [["migrate", "--dryrun"], "transcript-store: migrate: unknown option --dryrun (did you mean --dry-run?)\n"],
      [["ls", "--rot", "x"], "transcript-store: ls: unknown option --rot (did you mean --root?)\n"],
      [["--rooot", "x", "ls"], "transcript-store: unknown option --rooot (did you mean --root?)\n"],
      [["ls", "-q"], "transcript-store: ls: unknown option -q (try transcript-store ls --help)\n"],
      [["ls", "--root"], "transcript-store: ls: --root needs a value (--root <value>)\n"],
      [["ls", "--all=yes"], "transcript-store: ls: --all takes no value\n"],
      [
        ["import", "/nonexistent/s.ndjson"],
        "transcript-store: import: cannot read /nonexistent/s.ndjson: ENOENT: no such file or directory, open '/nonexistent/s.ndjson'\n",
      ],
    ];
    for (const [argv, message] of cases) {
      const run = await text(argv);
      expect([run.code, run.stderr, run.stdout], argv.join(" ")).toEqual([2, message, ""]);
    }
  }, 60_000);

  it("global flags are accepted before the command name as after it", async () => {
    const { root, id, cwd } = await oneSession();
    const after = await text(["ls", cwd, "--json", "--root", root]);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout.split("\n")[0]!).id).toBe(id);
    for (const argv of [
      ["--root", root, "--json", "ls", cwd],
      [`--root=${root}`, "ls", "--json", cwd],
      ["--json", "--root", root, "ls", cwd],
    ]) {
      const before = await text(argv);
      expect([before.code, before.stdout, before.stderr], argv.join(" ")).toEqual([0, after.stdout, ""]);
    }
    const help = await text(["--root", root, "ls", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: transcript-store ls/);
  }, 60_000);

  it("--json errors are one JSON line on stdout with the code (and the text line on stderr)", async () => {
    const root = tempDir();
    const missing = await text(["show", "deadbeef", "--json", "--root", root]);
    expect(missing.code).toBe(1);
    expect(missing.stdout.endsWith("\n")).toBe(true);
    const record = JSON.parse(missing.stdout);
    expect(record).toMatchObject({ type: "error", code: "SESSION_NOT_FOUND", exitCode: 1 });
    expect(typeof record.message).toBe("string");
    expect(missing.stderr).toMatch(/^transcript-store: SESSION_NOT_FOUND: /);
    const usage = await text(["--json", "ls", "--al"]);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toEqual({
      type: "error",
      code: "USAGE",
      exitCode: 2,
      message: "ls: unknown option --al (did you mean --all?)",
    });
  }, 30_000);

  it("every line of --help and of each command's help fits 80 columns", async () => {
    const helps = [await text(["--help"]), ...(await Promise.all(COMMANDS.map((c) => text([c, "--help"]))))];
    expect(helps.map((h) => h.code)).toEqual(helps.map(() => 0));
    for (const h of helps) for (const line of h.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(80);
    // Nothing lost to the wrapping: every command and its whole summary are still there.
    const top = helps[0]!.stdout.replace(/\s+/g, " ");
    for (const c of COMMANDS) expect(top).toContain(` ${c}`);
    expect(top).toContain("bring session files to v3 with images in the blob store (imports into the store by default)");
  }, 60_000);

  it("$TRANSCRIPT_STORE_SESSIONS_DIR names the sessions directory; --sessions-dir wins over it", async () => {
    const sessionsDir = join(tempDir(), "agent-sessions");
    const { id, cwd } = await oneSession(sessionsDir);
    const run = await text(["ls", cwd, "--json", "--root", tempDir()], { TRANSCRIPT_STORE_SESSIONS_DIR: sessionsDir });
    expect(run.code, run.stderr).toBe(0);
    expect(
      run.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).id),
    ).toEqual([id]);
    const flag = await text(["ls", cwd, "--json", "--root", tempDir(), "--sessions-dir", join(tempDir(), "other")], {
      TRANSCRIPT_STORE_SESSIONS_DIR: sessionsDir,
    });
    expect(
      flag.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).id),
    ).not.toContain(id);
  }, 30_000);
});
