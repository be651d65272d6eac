import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { REPO_ROOT, runTs } from "../support/child.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const BIN = join(REPO_ROOT, "bin/transcript-store.mjs");

async function store() {
  const root = tempDir();
  const cwd = join(root, "proj");
  const m = await SessionManager.create(cwd, { root });
  const png = makePng(32, 32, 4).toString("base64");
  m.appendMessage({
    role: "user",
    content: [
      { type: "text", text: "look at this" },
      { type: "image", data: png, mimeType: "image/png" },
    ],
  });
  m.appendMessage({ role: "assistant", content: [{ type: "text", text: "nice" }] });
  await m.close();
  return { root, cwd, m, png };
}

describe("transcript-store session commands", () => {
  it("export | import round-trips a session; images inline unless --refs", async () => {
    const { root, m, png } = await store();
    const exported = await cli(["export", m.sessionId.slice(0, 18), "--root", root]);
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual(m.header);
    expect(lines[1].message.content[1].data).toBe(png);
    const refs = await cli(["export", m.sessionId, "--refs", "--root", root]);
    expect(JSON.parse(refs.stdout.split("\n")[1]!).message.content[1].data).toBe(`blob:sha256:${sha(Buffer.from(png, "base64"))}`);

    const other = tempDir();
    const imported = await cli(["import", "--root", other, "--json"], { stdin: exported.stdout });
    expect(imported.code).toBe(0);
    const copy = await SessionManager.open(imported.records[0]!.path, { root: other, readOnly: true });
    expect(copy.getEntries()).toEqual(m.getEntries());
    expect(copy.header).toEqual(m.header);
    const bytes = readFileSync(imported.records[0]!.path);
    const again = await cli(["import", "--root", other, "--json"], { stdin: exported.stdout });
    expect([again.code, again.records[0]?.type]).toEqual([0, "unchanged"]); // already there: never overwritten
    const asRefs = await cli(["import", "--root", other, "--json"], { stdin: refs.stdout });
    expect([asRefs.code, asRefs.records[0]?.type]).toEqual([0, "unchanged"]);
    expect(readFileSync(imported.records[0]!.path)).toEqual(bytes);
    const bad = await cli(["import", "--root", other], { stdin: '{"type":"session","id":"x"}\nnot json\n' });
    expect(bad.code).toBe(1);
    expect(bad.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  });

  it("ls, show, fork, mv and stats work on a real tree and speak --json", async () => {
    const { root, cwd, m } = await store();
    const ls = await cli(["ls", cwd, "--root", root, "--json"]);
    expect(ls.records.map((r) => r.id)).toEqual([m.sessionId]);
    expect(ls.records[0]).toMatchObject({ messageCount: 2, firstMessage: "look at this" });
    const show = await cli(["show", m.sessionId, "--root", root, "--json"]);
    expect(show.records[0]).toMatchObject({ header: { id: m.sessionId }, entries: 2 });
    expect((await cli(["show", m.sessionId, "--root", root])).stdout).toContain("message/assistant nice");
    const fork = await cli(["fork", m.sessionId, "--root", root, "--json"]);
    expect(fork.records[0]).toMatchObject({ parentSession: m.sessionId, entries: 2 });
    const all = await cli(["ls", "--all", "--root", root, "--ndjson"]);
    expect(all.records).toHaveLength(2);
    const mv = await cli(["mv", fork.records[0]!.id, join(root, "elsewhere"), "--root", root, "--json"]);
    expect(mv.code).toBe(0);
    expect(mv.records[0]!.cwd).toBe(join(root, "elsewhere"));
    expect((await cli(["ls", join(root, "elsewhere"), "--root", root, "--json"])).records.map((r) => r.id)).toEqual([fork.records[0]!.id]);
    const stats = await cli(["stats", "--root", root, "--json"]);
    expect(stats.records[0]).toMatchObject({ sessions: 2, blobs: 1, references: 2, referencedBlobs: 1, dedupRatio: 2 });
    expect((await cli(["ls", "--root", root], { cwd })).stdout).toContain("look at this");
  });

  it("mv onto a path another session holds exits 1 with SESSION_EXISTS (stderr and the --json error record), nothing moved", async () => {
    const { root, m } = await store();
    const elsewhere = join(root, "elsewhere");
    const other = await SessionManager.create(elsewhere, { root });
    other.appendMessage({ role: "user", content: "held" });
    await other.close();
    const taken = join(dirname(other.sessionFile!), basename(m.sessionFile!));
    writeFileSync(taken, "another session\n");
    const mv = await cli(["mv", m.sessionId, elsewhere, "--root", root, "--json"]);
    expect(mv.code).toBe(1);
    expect(mv.stderr).toContain("SESSION_EXISTS");
    expect(mv.records.at(-1)).toMatchObject({ type: "error", code: "SESSION_EXISTS", exitCode: 1 });
    expect(readFileSync(taken, "utf8")).toBe("another session\n");
    expect(existsSync(m.sessionFile!)).toBe(true);
  });

  it("usage errors print one line and exit 2; expected failures exit 1 without a stack", async () => {
    const root = tempDir();
    for (const argv of [
      ["frobnicate"],
      ["ls", "--nope"],
      ["show"],
      ["mv", "x"],
      ["verify", join(root, "missing")],
      ["gc", "--grace", "soon"],
    ]) {
      const run = await cli([...argv, "--root", root]);
      expect(run.code, argv.join(" ")).toBe(2);
      expect(run.stderr.trim().split("\n"), argv.join(" ")).toHaveLength(1);
    }
    expect((await cli([])).code).toBe(2);
    const missing = await cli(["show", "deadbeef", "--root", root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^transcript-store: SESSION_NOT_FOUND: /);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    expect((await cli(["--help"])).code).toBe(0);
  });

  it("runs as a spawned binary", async () => {
    const { root, m } = await store();
    const run = await runTs(BIN, ["ls", "--all", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.trim()).id).toBe(m.sessionId);
    const usage = await runTs(BIN, ["nope"]);
    expect(usage.code).toBe(2);
  }, 30_000);
});

describe("session arguments given as paths", () => {
  it("show accepts a path to a session file outside the store (absolute or relative)", async () => {
    const root = tempDir();
    const elsewhere = tempDir("ts-elsewhere-");
    const m = await SessionManager.open(join(elsewhere, "chat.jsonl"), { root, cwd: elsewhere });
    m.appendMessage({ role: "user", content: "hello from a path" });
    await m.close();
    const shown = await cli(["show", join(elsewhere, "chat.jsonl"), "--root", root]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("hello from a path");
    const relative = await cli(["show", "chat.jsonl", "--root", root], { cwd: elsewhere });
    expect(relative.code, relative.stderr).toBe(0);
    const missing = await cli(["show", join(elsewhere, "nope.jsonl"), "--root", root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/SESSION_NOT_FOUND/);
  });
});
