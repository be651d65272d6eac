import { hasPseudoTerminal } from "../support/terminal.ts";
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

/** util-linux `script` runs a command on a pseudo-terminal; a Ctrl-C written to its stdin reaches the CLI as SIGINT. */
const HAS_SCRIPT = hasPseudoTerminal();
const BIN = join(REPO_ROOT, "bin/transcript-store.mjs");
const ESC = "\u001b";

/**
 * Runs the CLI on a pseudo-terminal and types Ctrl-C once `ready` matches its output. Resolves with
 * the exit status (`script -e` passes on the child's) and every byte the terminal received.
 */
function interruptOnTerminal(args: string, ready: RegExp): Promise<{ status: number | null; output: string; sent: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", `'${process.execPath}' '${BIN}' ${args}`, "/dev/null"], {
      env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    let sent = false;
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString("utf8");
      if (!sent && ready.test(output)) {
        sent = true;
        child.stdin.write("\u0003");
      }
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, output, sent }));
  });
}

const header = (id: string) => ({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/p" });
const entry = (i: number) => ({
  type: "message",
  id: `e${i}`,
  parentId: i === 0 ? null : `e${i - 1}`,
  timestamp: "2026-01-01T00:00:01.000Z",
  message: { role: "user", content: [{ type: "text", text: `hello ${i} ${"x".repeat(200)}` }], timestamp: 1 },
});

/** `count` valid v2-style session files (no version: migrate rewrites each one). */
function manyFiles(count: number): string {
  const dir = tempDir();
  for (let f = 0; f < count; f++) {
    const lines = [{ ...header(`s${f}`), version: 2 }, ...Array.from({ length: 20 }, (_, i) => entry(i))];
    writeFileSync(join(dir, `s${String(f).padStart(5, "0")}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  }
  return dir;
}

/** The terminal is left as found: every hidden cursor shown again, line wrap back on. */
function expectTerminalRestored(output: string) {
  expect(output.lastIndexOf(`${ESC}[?25h`), "cursor shown after it was hidden").toBeGreaterThan(output.lastIndexOf(`${ESC}[?25l`));
  expect(output.lastIndexOf(`${ESC}[?7h`), "line wrap on after it was turned off").toBeGreaterThan(output.lastIndexOf(`${ESC}[?7l`));
}

describe.skipIf(!HAS_SCRIPT)("Ctrl-C on a terminal", () => {
  it("migrate stops between files, restores the terminal, leaves every file whole, and exits 130", async () => {
    const dir = manyFiles(1500);
    const root = tempDir();
    const before = new Map(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n), "utf8")]));
    const run = await interruptOnTerminal(`migrate '${dir}' --in-place --root '${root}'`, /migrating \[.*\] [1-9]\d*\/1500/);
    expect(run.sent).toBe(true);
    expect(run.status, run.output.slice(-400)).toBe(130);
    expectTerminalRestored(run.output);
    expect(run.output).toContain("interrupted");
    // Nothing half-done: each file is either untouched or fully migrated (v3, same entries); no temp file left.
    const after = readdirSync(dir).sort();
    expect(after).toEqual([...before.keys()].sort());
    let migrated = 0;
    for (const name of after) {
      const text = readFileSync(join(dir, name), "utf8");
      if (text === before.get(name)) continue;
      const lines = text
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines[0].version).toBe(3);
      expect(lines.slice(1).map((l) => l.id)).toEqual(Array.from({ length: 20 }, (_, i) => `e${i}`));
      migrated++;
    }
    expect(migrated).toBeGreaterThan(0);
    expect(migrated).toBeLessThan(1500); // stopped, not run to the end
  }, 120_000);

  it("verify stops between files instead of running to the end, and exits 130", async () => {
    const dir = manyFiles(3000);
    const run = await interruptOnTerminal(`verify '${dir}' --root '${tempDir()}'`, /verifying \[.*\] [1-9]\d*\/3000/);
    expect(run.sent).toBe(true);
    expect(run.status, run.output.slice(-400)).toBe(130);
    expectTerminalRestored(run.output);
    expect(run.output).not.toMatch(/3000 file\(s\)/);
  }, 120_000);
});

describe.skipIf(!HAS_SCRIPT)("Ctrl-C outside a loop over files", () => {
  it("ends the run at once (import - waiting on the terminal): exit 130, nothing imported", async () => {
    const root = tempDir();
    const child = spawn("script", ["-qec", `'${process.execPath}' '${BIN}' import - --root '${root}'`, "/dev/null"], {
      env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    // Whenever the Ctrl-C lands (before or after the CLI has started), the run must end, not wait.
    const typed = setTimeout(() => child.stdin.write("\u0003"), 2_000);
    const hung = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(typed);
    clearTimeout(hung);
    expect(status).toBe(130);
    expect(readdirSync(root)).toEqual([]);
  }, 60_000);
});

describe("a closed pipe", () => {
  it("keeps a failing command's exit code when its reader goes away (`verify --json … | head`)", async () => {
    // 400 unreadable files: far more findings than a pipe buffer holds, so writes meet EPIPE.
    const dir = tempDir();
    for (let f = 0; f < 400; f++) writeFileSync(join(dir, `bad${f}-${"n".repeat(100)}.jsonl`), "not json\n");
    const run = await new Promise<{ code: number | null; firstChunk: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, "verify", dir, "--json", "--root", tempDir()], {
        env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
        stdio: ["ignore", "pipe", "ignore"],
      });
      let firstChunk = "";
      child.stdout.once("data", (d: Buffer) => {
        firstChunk = d.toString("utf8");
        child.stdout.destroy(); // what `head -n 1` does once it has its line
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, firstChunk }));
    });
    expect(run.firstChunk).toMatch(/bad\d+-n+\.jsonl/);
    expect(run.code).toBe(1);
  }, 60_000);
});

describe.skipIf(!HAS_SCRIPT)("import on a terminal", () => {
  /** Runs the CLI with stdin (and stdout, stderr) a pseudo-terminal nobody types into; killed if it is still waiting after 20 s. */
  function onIdleTerminal(args: string): Promise<{ status: number | null; output: string; killed: boolean }> {
    return new Promise((resolve, reject) => {
      const child = spawn("script", ["-qec", `'${process.execPath}' '${BIN}' ${args}`, "/dev/null"], {
        env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let output = "";
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        child.kill("SIGKILL");
      }, 20_000);
      child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")));
      child.on("error", reject);
      child.on("close", (status) => {
        clearTimeout(timer);
        resolve({ status, output, killed });
      });
    });
  }

  it("with no file it says how to give input and exits 2 instead of waiting for typing", async () => {
    const root = tempDir();
    const run = await onIdleTerminal(`import --root '${root}'`);
    expect(run.killed, "still waiting on the terminal").toBe(false);
    expect(run.status).toBe(2);
    expect(run.output).toMatch(/^transcript-store: import: no input: pipe NDJSON in .*name a file/);
    expect(readdirSync(root)).toEqual([]); // nothing written
  }, 60_000);

  it("reads the file it is given (stdin a terminal all the same)", async () => {
    const root = tempDir();
    const file = join(tempDir(), "s.ndjson");
    writeFileSync(file, `${[header("imported-1"), entry(0)].map((l) => JSON.stringify(l)).join("\n")}\n`);
    const run = await onIdleTerminal(`import '${file}' --root '${root}'`);
    expect(run.killed).toBe(false);
    expect(run.status, run.output).toBe(0);
    expect(run.output).toContain("imported imported-1 (1 entries)");
  }, 60_000);
});

describe.skipIf(!HAS_SCRIPT)("colour and terminal capabilities", () => {
  function onTerminalWith(env: Record<string, string>, args: string): string {
    const run = spawnSync("script", ["-qec", `'${process.execPath}' '${BIN}' ${args}`, "/dev/null"], {
      env: { ...process.env, TRANSCRIPT_STORE_URL: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(run.status, run.stdout.toString()).toBe(0);
    return run.stdout.toString("utf8");
  }

  it("the CLI prints no colour (SGR) whatever NO_COLOR/FORCE_COLOR say; TERM=dumb gets plain progress lines", () => {
    const dir = manyFiles(3);
    const envs: Array<Record<string, string>> = [{}, { NO_COLOR: "1" }, { FORCE_COLOR: "3" }, { FORCE_COLOR: "0" }];
    for (const env of envs) {
      const output = onTerminalWith(env, `verify '${dir}' --root '${tempDir()}'`);
      expect(output, JSON.stringify(env)).toContain("3 file(s)");
      expect(output, JSON.stringify(env)).not.toMatch(new RegExp(`${ESC}\\[[0-9;]*m`)); // no colour, ever
    }
    // A terminal that cannot move the cursor gets one line per file, no control sequence at all.
    const dumb = onTerminalWith({ TERM: "dumb" }, `verify '${dir}' --root '${tempDir()}'`);
    expect(dumb).not.toContain(ESC);
    expect(dumb).toContain("verifying 3/3 s00002.jsonl");
  }, 60_000);
});
