import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runTs } from "../support/child.ts";
import { cli, cliProcess } from "../support/cli.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { unsafeCharacters, hasPseudoTerminal } from "../support/terminal.ts";
import { tempDir } from "../support/temp-dir.ts";

// What a hostile transcript (or file name) holds, and how the CLI must show it: every control as
// its JSON escape (`\u001b`), printable text as it is.
const ESC = "\x1b";
const BEL = "\x07";
const SET_TITLE = `${ESC}]0;owned${BEL}`; // retitles the window
const CLEAR = `${ESC}[2J`; // clears the screen
const ALT_SCREEN = `${ESC}[?1049h`; // switches to the alternate screen
const CLIPBOARD = `${ESC}]52;c;b3duZWQ=${BEL}`; // OSC 52: writes the clipboard
const CSI8 = "\u009b2J"; // 8-bit CSI
const OSC8 = "\u009d0;x\u009c"; // 8-bit OSC … ST
const BIDI = "\u202e\u2067"; // right-to-left override, right-to-left isolate

const TITLE = `T1${SET_TITLE}${CSI8}${BIDI}\ud800\nforged row`;
const CWD = `/tmp/proj${ALT_SCREEN}${OSC8}\x7f`;
const ID = `0197a000-0000-7000-8000-0000000000e5${CLEAR}`;
const TEXT = `hello${CLIPBOARD} ${CSI8}\r${BIDI} \ud800 end`;
const FILE_NAME = `evil${SET_TITLE}${CSI8}.jsonl`;

const SHOWN = {
  setTitle: String.raw`\u001b]0;owned\u0007`,
  clear: String.raw`\u001b[2J`,
  altScreen: String.raw`\u001b[?1049h`,
  clipboard: String.raw`\u001b]52;c;b3duZWQ=\u0007`,
  csi8: String.raw`\u009b2J`,
  osc8: String.raw`\u009d0;x\u009c`,
  bidi: String.raw`\u202e\u2067`,
  loneSurrogate: String.raw`\ud800`,
  del: String.raw`\u007f`,
  newline: String.raw`\n`,
};

const header = { type: "session", version: 3, id: ID, timestamp: "2025-06-01T09:00:00.000Z", cwd: CWD, title: TITLE };
const entries = [
  {
    type: "message",
    id: "1a2b0001",
    parentId: null,
    timestamp: "2025-06-01T09:01:00.000Z",
    message: { role: "user", content: [{ type: "text", text: TEXT }], timestamp: 1748768460000 },
  },
  {
    type: "message",
    id: "1a2b0002",
    parentId: "1a2b0001",
    timestamp: "2025-06-01T09:02:00.000Z",
    message: { role: "assistant", content: `answer${CLEAR}${OSC8}`, timestamp: 1748768520000 },
  },
];
const jsonl = (records: unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");

/** A store whose one session holds hostile text everywhere: id, title, cwd, messages, file name. */
function hostileStore() {
  const root = tempDir();
  const bucket = join(root, "sessions", "-tmp-proj");
  mkdirSync(bucket, { recursive: true });
  const path = join(bucket, FILE_NAME);
  writeFileSync(path, jsonl([header, ...entries]));
  return { root, path };
}

/** Legacy files to migrate and verify: a hostile name and a malformed hostile line. */
function hostileLegacyDir() {
  const dir = join(tempDir(), `legacy${CLEAR}`);
  mkdirSync(dir);
  writeFileSync(join(dir, FILE_NAME), `${jsonl([header, entries[0]])}{nope${CLIPBOARD}}\n${jsonl([entries[1]])}`);
  return dir;
}

/** The bytes are UTF-8 holding no control a terminal acts on (only `\n` and `\t`), no bidi control, no U+FFFD. */
function expectTerminalSafe(bytes: Buffer, what: string): string {
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  expect(unsafeCharacters(text, { layout: true, decoded: true }), `${what}: ${JSON.stringify(text.slice(0, 400))}`).toEqual([]);
  return text;
}

/** util-linux `script` runs a command on a pseudo-terminal: stderr is a TTY there, so the CLI draws its progress bar. */
const HAS_SCRIPT = hasPseudoTerminal();

function onTerminal(command: string): { status: number | null; output: Buffer } {
  const run = spawnSync("script", ["-qec", command, "/dev/null"], {
    env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { status: run.status, output: run.stdout };
}

const records = (stdout: Buffer) =>
  stdout
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("no transcript text reaches the terminal raw", () => {
  it("ls shows hostile ids, titles and cwds made visible, one row per session; --json keeps them exact", async () => {
    const { root } = hostileStore();
    const text = await cliProcess(["ls", "--all", "--root", root]);
    expect(text.code, text.stderr.toString()).toBe(0);
    const out = expectTerminalSafe(text.stdout, "ls stdout");
    expectTerminalSafe(text.stderr, "ls stderr");
    for (const shown of [SHOWN.clear, SHOWN.setTitle, SHOWN.csi8, SHOWN.bidi, SHOWN.altScreen, SHOWN.osc8, SHOWN.del, SHOWN.newline])
      expect(out).toContain(shown);
    expect(out.trimEnd().split("\n")).toHaveLength(3); // head, rule, the one session: a newline in a title forges no row

    const json = await cliProcess(["ls", "--all", "--root", root, "--json"]);
    expect(json.code).toBe(0);
    // machine output on a pipe is data: exact, as JSON.stringify writes it (made visible only on a terminal)
    expect(json.stdout.toString("utf8")).toContain(JSON.stringify(TITLE));
    const [info] = records(json.stdout);
    expect([info.id, info.title, info.cwd]).toEqual([ID, TITLE, CWD]);
  }, 30_000);

  it("show prints the path, header and message text made visible; show --json, export and import keep every value exact", async () => {
    const { root, path } = hostileStore();
    const text = await cliProcess(["show", path, "--root", root]);
    expect(text.code, text.stderr.toString()).toBe(0);
    const out = expectTerminalSafe(text.stdout, "show stdout");
    expectTerminalSafe(text.stderr, "show stderr");
    for (const shown of [SHOWN.setTitle, SHOWN.clear, SHOWN.clipboard, SHOWN.csi8, SHOWN.osc8, SHOWN.bidi, SHOWN.loneSurrogate])
      expect(out).toContain(shown);

    const json = await cliProcess(["show", path, "--root", root, "--json"]);
    expect(json.code).toBe(0);
    expect(json.stdout.toString("utf8")).toContain(JSON.stringify(header));
    const [shown] = records(json.stdout);
    expect(shown.path).toBe(path);
    expect(shown.header).toEqual(header);

    const exported = await cliProcess(["export", path, "--root", root]);
    expect(exported.code, exported.stderr.toString()).toBe(0);
    expect(exported.stdout.toString("utf8")).toBe(jsonl([header, ...entries])); // byte-exact on a pipe
    expect(records(exported.stdout)).toEqual([header, ...entries]);

    const imported = await cli(["import", "--root", tempDir()], { stdin: exported.stdout.toString("utf8") });
    expect(imported.code, imported.stderr).toBe(0);
    const importedOut = expectTerminalSafe(Buffer.from(imported.stdout), "import stdout");
    expect(importedOut).toContain(`imported 0197a000-0000-7000-8000-0000000000e5${SHOWN.clear} (2 entries)`);
  }, 30_000);

  it("verify, migrate and their progress lines show hostile file names and lines made visible", async () => {
    const dir = hostileLegacyDir();
    const verify = await cliProcess(["verify", dir, "--root", tempDir()]);
    expect(verify.code).toBe(1); // the malformed line
    const verifyOut = expectTerminalSafe(verify.stdout, "verify stdout");
    const verifyErr = expectTerminalSafe(verify.stderr, "verify stderr");
    expect(verifyOut).toContain(SHOWN.clear); // the directory
    expect(verifyOut).toContain(SHOWN.setTitle); // the file name
    expect(verifyErr).toContain(`verifying 1/1 evil${SHOWN.setTitle}${SHOWN.csi8}.jsonl`);

    const json = await cliProcess(["verify", dir, "--root", tempDir(), "--json"]);
    expect(records(json.stdout).find((r) => r.type === "finding").path).toBe(join(dir, FILE_NAME));

    const root = tempDir();
    const migrate = await cliProcess(["migrate", dir, "--root", root]);
    expect(migrate.code, migrate.stderr.toString()).toBe(0);
    const migrateOut = expectTerminalSafe(migrate.stdout, "migrate stdout");
    const migrateErr = expectTerminalSafe(migrate.stderr, "migrate stderr");
    expect(migrateOut).toContain(SHOWN.setTitle);
    expect(migrateErr).toContain(`migrating 1/1 evil${SHOWN.setTitle}${SHOWN.csi8}.jsonl`);
    const again = await cliProcess(["migrate", dir, "--root", root, "--json"]);
    expect(records(again.stdout)[0].source).toBe(join(dir, FILE_NAME));
  }, 60_000);

  it("gc, fork, mv and warnings show hostile ids and paths made visible", async () => {
    const { root, path } = hostileStore();
    writeFileSync(join(root, "sessions", "-tmp-proj", `garbage${CLEAR}\n.jsonl`), "garbage\n");
    const ls = await cliProcess(["ls", "--all", "--root", root]);
    expect(ls.code).toBe(0);
    const warning = expectTerminalSafe(ls.stderr, "ls warning");
    expect(warning).toContain(`garbage${SHOWN.clear}${SHOWN.newline}.jsonl)`);
    expect(warning.trimEnd().split("\n")).toHaveLength(1);

    const forget = await cliProcess(["gc", "--forget", `/tmp/gone${SET_TITLE}`, "--root", root]);
    expect(forget.code).toBe(1);
    expect(expectTerminalSafe(forget.stdout, "gc stdout")).toContain(`not registered: /tmp/gone${SHOWN.setTitle}`);

    const fork = await cliProcess(["fork", path, "--root", root, "--cwd", `/tmp/fork${OSC8}`]);
    expect(fork.code, fork.stderr.toString()).toBe(0);
    const forked = expectTerminalSafe(fork.stdout, "fork stdout");
    expect(forked).toContain(`forked 0197a000-0000-7000-8000-0000000000e5${SHOWN.clear} → `);
    expect(forked.trimEnd().split("\n")).toHaveLength(2);

    const target = join(tempDir(), `moved${CLIPBOARD}\nforged line`);
    const mv = await cliProcess(["mv", path, target, "--root", root]);
    expect(mv.code, mv.stderr.toString()).toBe(0);
    const mvOut = expectTerminalSafe(mv.stdout, "mv stdout");
    expectTerminalSafe(mv.stderr, "mv stderr");
    expect(mvOut).toContain(`${SHOWN.clipboard}${SHOWN.newline}forged line`);
    expect(mvOut.trimEnd().split("\n")).toHaveLength(2); // "moved … to <cwd>" and the new location
  }, 30_000);

  it("error messages show hostile paths, commands and options made visible, on one line", async () => {
    const missing = await cliProcess(["show", `/tmp/none${SET_TITLE}\n${CSI8}.jsonl`, "--root", tempDir()]);
    expect(missing.code).toBe(1);
    const err = expectTerminalSafe(missing.stderr, "show error");
    expect(err).toMatch(/^transcript-store: SESSION_NOT_FOUND: /);
    expect(err).toContain(`${SHOWN.setTitle}${SHOWN.newline}${SHOWN.csi8}`);
    expect(err.trimEnd().split("\n")).toHaveLength(1);

    const command = await cliProcess([`x${CSI8}${BIDI}`]);
    expect(command.code).toBe(2);
    expect(expectTerminalSafe(command.stderr, "unknown command")).toContain(`x${SHOWN.csi8}${SHOWN.bidi}`);

    const option = await cliProcess(["ls", `--x${SET_TITLE}`]);
    expect(option.code).toBe(2);
    expect(expectTerminalSafe(option.stderr, "unknown option")).toContain(SHOWN.setTitle);

    const uncaught = await runTs(join(import.meta.dirname, "helpers/cli-uncaught.ts"), [
      `lost ${CLIPBOARD}${CSI8}`,
      "ls",
      "--all",
      "--json", // an empty store's ls says so on stderr; --json keeps stderr the uncaught report's alone
      "--root",
      tempDir(),
    ]);
    expect(uncaught.code).toBe(1);
    const report = expectTerminalSafe(Buffer.from(uncaught.stderr), "uncaught error");
    expect(report).toBe(`transcript-store: lost ${SHOWN.clipboard}${SHOWN.csi8}\n`);
  }, 30_000);

  it.skipIf(!HAS_SCRIPT)(
    "ls --json and export on a terminal show control characters as \\u escapes: the same JSON values",
    () => {
      const { root, path } = hostileStore();
      const bin = join(REPO_ROOT, "bin/transcript-store.mjs");
      for (const args of [`ls --all --json --root '${root}'`, `export '${path}' --root '${root}'`]) {
        const run = onTerminal(`'${process.execPath}' '${bin}' ${args}`);
        expect(run.status, run.output.toString()).toBe(0);
        const text = new TextDecoder("utf-8", { fatal: true }).decode(run.output).replaceAll("\r\n", "\n");
        expect(unsafeCharacters(text, { layout: true, decoded: true }), args).toEqual([]);
        const values = text
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l));
        if (args.startsWith("ls")) expect([values[0].id, values[0].title, values[0].cwd]).toEqual([ID, TITLE, CWD]);
        else expect(values).toEqual([header, ...entries]);
      }
    },
    30_000,
  );

  it.skipIf(!HAS_SCRIPT)(
    "the progress bar on a terminal shows a hostile file name made visible",
    () => {
      const dir = tempDir();
      writeFileSync(join(dir, FILE_NAME), jsonl([header, ...entries]));
      const bin = join(REPO_ROOT, "bin/transcript-store.mjs");
      const run = onTerminal(`'${process.execPath}' '${bin}' migrate '${dir}' --root '${tempDir()}'`);
      expect(run.status, run.output.toString()).toBe(0);
      const text = new TextDecoder("utf-8", { fatal: true }).decode(run.output);
      expect(text).toContain("migrating [");
      expect(text).toContain(`1/1 evil${SHOWN.setTitle}${SHOWN.csi8}.jsonl`);
      // The bar moves the cursor with its own CSI sequences; nothing else may reach the terminal.
      expect(text).not.toContain(`${ESC}]`);
      expect(unsafeCharacters(text.replaceAll(ESC, "").replaceAll("\r", ""), { layout: true, decoded: true })).toEqual([]);
    },
    30_000,
  );
});

describe.skipIf(!pgCluster())("no transcript text reaches the terminal raw from a PostgreSQL store", () => {
  it("migrate --to, ls, show and verify show hostile names and text made visible; --json keeps them exact", async () => {
    // No lone surrogate here: what the database keeps of one is the backend's business, not the printer's.
    const title = TITLE.replace("\ud800", "");
    const text = TEXT.replace("\ud800", "");
    const dir = tempDir();
    writeFileSync(
      join(dir, FILE_NAME),
      jsonl([{ ...header, title }, { ...entries[0], message: { ...entries[0]!.message, content: [{ type: "text", text }] } }, entries[1]]),
    );
    writeFileSync(join(dir, `bad${CLIPBOARD}.jsonl`), "garbage\n");
    const url = await freshDatabase();
    const env = { TRANSCRIPT_STORE_URL: url };

    const migrate = await cliProcess(["migrate", dir, "--root", tempDir(), "--to", url]);
    expect(migrate.code).toBe(1); // the garbage file
    const report = expectTerminalSafe(migrate.stdout, "migrate --to stdout");
    expect(report).toContain(`evil${SHOWN.setTitle}${SHOWN.csi8}.jsonl`);
    expect(report).toContain(`failed    ${join(dir, "bad")}${SHOWN.clipboard}.jsonl: `);
    expect(report).toContain(SHOWN.clear); // the id
    expect(expectTerminalSafe(migrate.stderr, "migrate --to stderr")).toContain(`importing 2/2 evil${SHOWN.setTitle}${SHOWN.csi8}.jsonl`);

    const ls = await cliProcess(["ls", "--all"], { env });
    expect(ls.code, ls.stderr.toString()).toBe(0);
    const listed = expectTerminalSafe(ls.stdout, "ls stdout");
    for (const shown of [SHOWN.clear, SHOWN.setTitle, SHOWN.csi8, SHOWN.bidi, SHOWN.altScreen, SHOWN.osc8, SHOWN.newline])
      expect(listed).toContain(shown);
    const json = await cliProcess(["ls", "--all", "--json"], { env });
    const [info] = records(json.stdout);
    expect([info.id, info.title, info.cwd]).toEqual([ID, title, CWD]);

    const show = await cliProcess(["show", ID], { env });
    expect(show.code, show.stderr.toString()).toBe(0);
    expect(expectTerminalSafe(show.stdout, "show stdout")).toContain(SHOWN.clipboard);

    const verify = await cliProcess(["verify"], { env });
    expectTerminalSafe(verify.stdout, "verify stdout");
    expectTerminalSafe(verify.stderr, "verify stderr");
  }, 60_000);
});
