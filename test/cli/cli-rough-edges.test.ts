import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cliProcess } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Sessions created at the same millisecond: their ids share the 12-digit time prefix. */
async function twins(root: string, titles: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const title of titles) {
    const m = await SessionManager.create("/proj", { root, now: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) });
    m.appendMessage({ role: "user", content: title, timestamp: 1 } as never);
    await m.close();
    ids.push(m.sessionId);
  }
  return ids;
}

describe("an ambiguous id prefix (issue 36 #9)", () => {
  it("lists its candidates one per line with time and title, as git does for a short SHA", async () => {
    const root = tempDir();
    const ids = await twins(root, ["first words", "second words"]);
    const run = await cliProcess(["show", ids[0]!.slice(0, 8), "--root", root]);
    expect(run.code).toBe(1);
    const lines = run.stderr.toString().split("\n");
    expect(lines[0]).toMatch(/SESSION_AMBIGUOUS: "[0-9a-f]{8}" matches 2 sessions/);
    expect(lines.slice(1, 3).sort()).toEqual(
      [`  ${ids[0]}  2026-01-02 03:04  first words`, `  ${ids[1]}  2026-01-02 03:04  second words`].sort(),
    );
    expect(run.stderr.toString()).not.toContain("\\n");
  });
});

describe("fork and unbundle (issue 36 #10)", () => {
  it("a fresh fork of an old session sorts first in ls", async () => {
    const root = tempDir();
    const [old] = await twins(root, ["old work"]);
    const recent = await SessionManager.create("/proj", { root, now: () => new Date(Date.now() - 60_000) });
    recent.appendMessage({ role: "user", content: "recent work", timestamp: 1 } as never);
    await recent.close();
    const fork = await cliProcess(["fork", old!, "--root", root, "--json"], { cwd: "/" });
    expect(fork.code).toBe(0);
    const forkId = JSON.parse(fork.stdout.toString().split("\n")[0]!).id;
    const ls = await cliProcess(["ls", "--all", "--root", root, "--json"]);
    const ids = ls.stdout
      .toString()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual([forkId, recent.sessionId, old]);
  });

  it("a repeated unbundle reports the cwd the session has in the store", async () => {
    const root = tempDir();
    const [id] = await twins(root, ["bundled work"]);
    const file = `${tempDir()}/b.tar`;
    expect((await cliProcess(["bundle", id!, "-o", file, "--root", root])).code).toBe(0);
    const target = tempDir();
    const first = await cliProcess(["unbundle", file, "--cwd-map", "/proj=/elsewhere", "--root", target, "--json"]);
    expect(JSON.parse(first.stdout.toString()).cwd).toBe("/elsewhere");
    for (const args of [[], ["--cwd-map", "/proj=/elsewhere"]]) {
      const again = await cliProcess(["unbundle", file, ...args, "--root", target, "--json"]);
      const record = JSON.parse(again.stdout.toString());
      const ls = await cliProcess(["ls", "--all", "--root", target, "--json"]);
      expect(record.cwd).toBe(JSON.parse(ls.stdout.toString()).cwd);
    }
  });
});

describe("usage's cost column (issue 36 #11)", () => {
  it("has one fixed precision (cents, as ccusage prints), right-aligned", async () => {
    const root = tempDir();
    for (const [cost, model] of [
      [0.009, "small"],
      [48.2, "large"],
    ] as const) {
      const m = await SessionManager.create("/proj", { root });
      m.appendMessage({
        role: "assistant",
        content: [{ type: "text", text: "done" }],
        provider: "p",
        model,
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: cost } },
        timestamp: Date.now(),
      } as never);
      await m.close();
    }
    const run = await cliProcess(["usage", "--by", "model", "--root", root]);
    expect(run.code).toBe(0);
    const lines = run.stdout.toString().trimEnd().split("\n");
    const costs = lines.slice(2).map((l) => l.slice(lines[0]!.indexOf("cost")));
    expect(costs.sort()).toEqual([" $0.01", "$48.20", "$48.21"].sort());
    expect(costs.at(-1)).toBe("$48.21");
  });
});

describe("export -o --force, bundle --compress (issue 36 #12)", () => {
  it("export --to markdown -o over an existing file: refused without --force, replaced with it", async () => {
    const root = tempDir();
    const [id] = await twins(root, ["exported words"]);
    const file = join(tempDir(), "out.md");
    writeFileSync(file, "old contents\n");
    const refused = await cliProcess(["export", id!, "--to", "markdown", "-o", file, "--root", root]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.toString()).toContain("OUTPUT_EXISTS");
    expect(refused.stderr.toString()).toContain("--force");
    expect(readFileSync(file, "utf8")).toBe("old contents\n");
    const forced = await cliProcess(["export", id!, "--to", "markdown", "-o", file, "--force", "--root", root]);
    expect(forced.code).toBe(0);
    expect(readFileSync(file, "utf8")).toContain("exported words");
    const bundled = join(tempDir(), "b.tar");
    writeFileSync(bundled, "x");
    expect((await cliProcess(["bundle", id!, "-o", bundled, "--force", "--root", root])).code).toBe(0);
    expect(readFileSync(bundled).length).toBeGreaterThan(1024);
  });

  it("bundle --compress writes gzip; unbundle detects it and restores the session byte for byte", async () => {
    const root = tempDir();
    const [id] = await twins(root, ["compressed words ".repeat(200)]);
    const dir = tempDir();
    expect((await cliProcess(["bundle", id!, "-o", join(dir, "plain.tar"), "--root", root])).code).toBe(0);
    expect((await cliProcess(["bundle", id!, "-o", join(dir, "small.tar.gz"), "--compress", "--root", root])).code).toBe(0);
    const packed = readFileSync(join(dir, "small.tar.gz"));
    expect([packed[0], packed[1]]).toEqual([0x1f, 0x8b]);
    expect(packed.length).toBeLessThan(readFileSync(join(dir, "plain.tar")).length / 2);
    const target = tempDir();
    const restored = await cliProcess(["unbundle", join(dir, "small.tar.gz"), "--root", target, "--json"]);
    expect(restored.code).toBe(0);
    const record = JSON.parse(restored.stdout.toString());
    expect(record.status).toBe("created");
    const source = await SessionManager.resolve(id!, undefined, { root });
    expect(readFileSync(record.location)).toEqual(readFileSync(source.path));
  });
});

describe("rekey takes ids and prefixes (issue 36 #13)", () => {
  it("in the file store, as every other command does", async () => {
    const root = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const m = await SessionManager.create("/proj", { root, encryption: { key: oldKey } });
    m.appendMessage({ role: "user", content: "quince", timestamp: 1 } as never);
    await m.close();
    writeFileSync(join(root, "old.key"), oldKey, { mode: 0o600 });
    writeFileSync(join(root, "new.key"), newKey, { mode: 0o600 });
    const keys = ["--key-file", join(root, "old.key"), "--new-key-file", join(root, "new.key")];
    const run = await cliProcess(["rekey", m.sessionId.slice(0, 13), ...keys, "--root", root, "--json"], { cwd: tempDir() });
    expect(run.stderr.toString()).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.toString())).toMatchObject({ type: "rekeyed", path: m.sessionFile, entries: 1 });
    const reopened = await SessionManager.open(m.sessionFile!, { root, encryption: { key: newKey }, readOnly: true });
    expect(reopened.getEntries().length).toBe(1);
    await reopened.close();
  });
});

describe("per-flag help (issue 36 #16)", () => {
  it("every command's --help names each of its flags with what it does", async () => {
    const { loadCommands } = await import("../../src/cli/main.ts");
    const missing: string[] = [];
    for (const command of await loadCommands()) {
      const run = await cliProcess([command.name, "--help"]);
      expect(run.code).toBe(0);
      const help = run.stdout.toString();
      for (const [name, spec] of Object.entries(command.options)) {
        // the flag's line: `--name [<value>]` then at least two words of text, on it or the next line
        // (the text is not the next flag's line: an empty text must not borrow it)
        const line = new RegExp(`^  (-\\w, )?--${name}( <[^>]+>)?[ \\t]*(\\n[ \\t]+)?(?!-)\\S+ \\S+`, "m");
        if (!line.test(help)) missing.push(`${command.name} --${name}${spec.type === "string" ? " <…>" : ""}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe("ls where there is nothing (a new user's first command)", () => {
  it("says on stderr that the cwd has no sessions and how to list every cwd, instead of an empty table", async () => {
    const root = tempDir();
    await twins(root, ["elsewhere"]);
    const run = await cliProcess(["ls", "/nothing-here", "--root", root]);
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toBe("");
    expect(run.stderr.toString()).toBe("no sessions of /nothing-here; ls --all lists every cwd's\n");
    const all = await cliProcess(["ls", "--all", "--root", tempDir()]);
    expect(all.code).toBe(0);
    expect(all.stdout.toString()).toBe("");
    expect(all.stderr.toString()).toMatch(/^no sessions in the store \(.+\)\n$/);
  });
});
