import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cliProcess } from "../support/cli.ts";
import { hasPseudoTerminal } from "../support/terminal.ts";
import { tempDir } from "../support/temp-dir.ts";

const BIN = join(import.meta.dirname, "../../bin/transcript-store.mjs");

/** `n` sessions last active in January 2026 (old enough for any prune), and their bytes. */
async function oldSessions(n: number) {
  const root = tempDir();
  const sessions: Array<{ id: string; path: string; bytes: Buffer }> = [];
  for (let i = 0; i < n; i++) {
    const m = await SessionManager.create("/proj", { root, now: () => new Date(Date.UTC(2026, 0, 1 + i)) });
    m.appendMessage({ role: "user", content: `old work ${i}`, timestamp: 1 } as never);
    await m.close();
    sessions.push({ id: m.sessionId, path: m.sessionFile!, bytes: readFileSync(m.sessionFile!) });
  }
  return { root, sessions };
}

const lines = (out: Buffer) => out.toString().trim().split("\n").filter(Boolean);
const records = (out: Buffer) => lines(out).map((l) => JSON.parse(l));

describe("a prune can be undone in one step (issue 36 #5)", () => {
  it("prune names its id; trash shows it and where each entry goes back; restore --last-prune brings all back", async () => {
    const { root, sessions } = await oldSessions(3);
    const pruned = await cliProcess(["prune", "--older-than", "30d", "--root", root]);
    expect(pruned.code).toBe(0);
    const pruneId = /undo: transcript-store restore (p\d{8}-\d{6}-[0-9a-f]{4})/.exec(pruned.stdout.toString())?.[1];
    expect(pruneId).toBeDefined();
    for (const s of sessions) expect(existsSync(s.path)).toBe(false);
    const trash = records((await cliProcess(["trash", "--root", root, "--json"])).stdout);
    expect(trash.map((t) => [t.pruneId, t.restoresTo]).sort()).toEqual(sessions.map((s) => [pruneId, s.path]).sort());
    const text = (await cliProcess(["trash", "--root", root])).stdout.toString();
    expect(text.split("\n")[0]).toMatch(/prune\s+restores to$/);
    const undo = await cliProcess(["restore", "--last-prune", "--root", root]);
    expect(undo.code).toBe(0);
    expect(lines(undo.stdout).at(-1)).toBe(`restored 3 of the 3 session(s) prune ${pruneId} trashed`);
    for (const s of sessions) expect(readFileSync(s.path).equals(s.bytes)).toBe(true);
    const again = await cliProcess(["restore", "--last-prune", "--root", root]);
    expect(again.code).toBe(1);
    expect(again.stderr.toString()).toContain("SESSION_NOT_FOUND");
  });

  it("restore <prune id> undoes that prune", async () => {
    const { root, sessions } = await oldSessions(2);
    const pruned = records((await cliProcess(["prune", "--older-than", "30d", "--root", root, "--json"])).stdout);
    const pruneId = pruned.find((r) => r.type === "summary")!.pruneId;
    expect((await cliProcess(["restore", pruneId, "--root", root])).code).toBe(0);
    for (const s of sessions) expect(readFileSync(s.path).equals(s.bytes)).toBe(true);
  });
});

describe("the trash is emptied by retention (issue 36 #6)", () => {
  it("prune and purge --expired remove trash entries past retention, reported as restic's forget --prune", async () => {
    const { root, sessions } = await oldSessions(3);
    expect((await cliProcess(["rm", sessions[0]!.id, "--root", root])).code).toBe(0);
    writeFileSync(join(root, "config.json"), JSON.stringify({ trash: { retainDays: 0 } }));
    const pruned = await cliProcess(["prune", "--older-than", "30d", "--keep-last", "1", "--root", root]);
    expect(pruned.code).toBe(0);
    // the entry rm made (and the one this prune just made: retention 0 days) are past retention
    expect(lines(pruned.stdout).at(-1)).toMatch(/^trash past its 0-day retention: purged 2 entr\(y\/ies\), \d+(\.\d)? \w*B freed$/);
    expect(records((await cliProcess(["trash", "--root", root, "--json"])).stdout)).toEqual([]);
    expect((await cliProcess(["rm", sessions[2]!.id, "--root", root])).code).toBe(0);
    const expired = await cliProcess(["purge", "--expired", "--root", root, "--json"]);
    expect(records(expired.stdout).map((r) => r.type)).toEqual(["purged", "summary"]);
  });
});

/** Runs the CLI on a pseudo-terminal (util-linux `script`), typing `input`; the exit status and what the terminal showed. */
function onTerminal(args: string, input: string): { status: number | null; output: string } {
  const run = spawnSync("script", ["-qec", `'${process.execPath}' '${BIN}' ${args}`, "/dev/null"], {
    input,
    env: { ...process.env, TRANSCRIPT_STORE_URL: "" },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, output: run.stdout };
}

describe.skipIf(!hasPseudoTerminal())("purge on a terminal (issue 36 #6)", () => {
  it("asks for confirmation: n keeps the trash, y purges, --yes does not ask; piped it never asks", async () => {
    const { root, sessions } = await oldSessions(3);
    for (const s of sessions) expect((await cliProcess(["rm", s.id, "--root", root])).code).toBe(0);
    const no = onTerminal(`purge --all --root '${root}'`, "n\n");
    expect(no.output).toMatch(/purge 3 trashed session\(s\), .* for good\? \[y\/N\]/);
    expect(no.status).toBe(1);
    expect(records((await cliProcess(["trash", "--root", root, "--json"])).stdout).length).toBe(3);
    const yes = onTerminal(`purge ${sessions[0]!.id} --root '${root}'`, "y\n");
    expect(yes.output).toContain("for good? [y/N]");
    expect(yes.status).toBe(0);
    const flag = onTerminal(`purge ${sessions[1]!.id} --yes --root '${root}'`, "");
    expect(flag.output).not.toContain("[y/N]");
    expect(flag.status).toBe(0);
    const piped = await cliProcess(["purge", "--all", "--root", root]);
    expect(piped.code).toBe(0);
    expect(piped.stderr.toString()).not.toContain("[y/N]");
    expect(records((await cliProcess(["trash", "--root", root, "--json"])).stdout)).toEqual([]);
  });
});
