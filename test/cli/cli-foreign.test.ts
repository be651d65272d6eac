import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { describeBackends } from "../conformance/backends.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";
import { viewsSession } from "../interchange/views-session.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/foreign");

/** Source lines as JSON values. */
function recordsOf(text: string): unknown[] {
  return text
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

describeBackends("import --from / export --to", { cli: true }, (backend) => {
  it("a Claude Code tree and a Codex rollout: one report per file, re-run unchanged, exported back equal", async () => {
    const options = await backend.options();
    const args = backend.cliArgs!(options);
    const cc = await cli([...args, "import", "--from", "claude-code", join(FIXTURES, "claude-code"), "--json"]);
    expect(cc.stderr).toBe("");
    expect(cc.code).toBe(0);
    expect(cc.records).toHaveLength(6);
    for (const r of cc.records) {
      expect(r.status).toBe("created");
      expect(r.counts.mapped + r.counts.kept + r.counts.damaged).toBe(r.counts.records);
      expect(r.counts.records).toBe(recordsOf(readFileSync(r.path, "utf8")).length);
    }
    const again = await cli([...args, "import", "--from", "claude-code", join(FIXTURES, "claude-code"), "--json"]);
    expect(again.records.map((r) => r.status)).toEqual(Array(6).fill("unchanged"));

    const images = cc.records.find((r) => r.path.endsWith("synthetic-v1.0.83-images.jsonl"))!;
    const out = await cli([...args, "export", images.id, "--to", "claude-code"]);
    expect(out.code).toBe(0);
    expect(recordsOf(out.stdout)).toEqual(recordsOf(readFileSync(images.path, "utf8")));
    // --branch names an entry of the session: one it does not hold is refused before anything is written
    const branch = await cli([...args, "export", images.id, "--to", "claude-code", "--branch", "ffffffff"]);
    expect(branch.code).toBe(1);
    expect(branch.stderr).toContain("ENTRY_NOT_FOUND");
    expect(branch.stdout).toBe("");

    const rollout = join(FIXTURES, "codex/synthetic-v0.2x-pre-envelope.jsonl");
    const cx = await cli([...args, "import", "--from", "codex", rollout, "--json"]);
    expect(cx.records[0]).toMatchObject({ status: "created", counts: { records: 8, mapped: 5, kept: 3, damaged: 0 } });
    const file = join(tempDir("ts-foreign-out-"), "rollout.jsonl");
    const written = await cli([...args, "export", cx.records[0]!.id, "--to", "codex", "-o", file]);
    expect(written.code).toBe(0);
    expect(written.stdout).toBe("");
    expect(recordsOf(readFileSync(file, "utf8"))).toEqual(recordsOf(readFileSync(rollout, "utf8")));

    // a Codex session to Claude Code is converted: Claude Code records our importer reads back, every line accounted for
    const claudeFile = join(tempDir("ts-foreign-out-"), "claude.jsonl");
    const converted = await cli([...args, "export", cx.records[0]!.id, "--to", "claude-code", "-o", claudeFile]);
    expect(converted.code).toBe(0);
    // the three records Codex keeps whole (meta, state, the prompt's event) have no Claude Code form, nor has the
    // reasoning (Claude's API takes only thinking Anthropic signed): kept, and said so, one warning each
    const kept = converted.stderr.split("\n").filter((l) => l.includes("EXTENSION_KEPT"));
    expect(kept).toHaveLength(4);
    expect(kept.filter((l) => l.includes("(custom)"))).toHaveLength(3);
    expect(kept.filter((l) => l.includes("(message)") && l.includes("no Claude Code form"))).toHaveLength(1);
    const claude = recordsOf(readFileSync(claudeFile, "utf8")) as Array<Record<string, unknown>>;
    expect(claude.filter((r) => r.type === "user" || r.type === "assistant").length).toBe(5);
    const back = await cli([...args, "import", "--from", "claude-code", claudeFile, "--json"]);
    expect(back.records[0]).toMatchObject({ status: "created", counts: { records: claude.length, mapped: 5, damaged: 0 }, problems: [] });
  });
});

it("without a path, import walks the agent's default tree ($HOME/.codex/sessions); --dry-run writes nothing", async () => {
  const home = tempDir("ts-foreign-home-");
  const root = tempDir("ts-foreign-root-");
  const day = join(home, ".codex/sessions/2026/03/25");
  mkdirSync(day, { recursive: true });
  writeFileSync(join(day, "rollout-a.jsonl"), readFileSync(join(FIXTURES, "codex/v0.129.0-turn-2.jsonl")));
  const dry = await cli(["--root", root, "import", "--from", "codex", "--dry-run"], { env: { HOME: home } });
  expect(dry.code).toBe(0);
  expect(dry.stdout).toContain("dry-run");
  expect(dry.stdout).toContain("rollout-a.jsonl");
  const ls = await cli(["--root", root, "ls", "--all", "--json"]);
  expect(ls.records).toEqual([]);
});

it("usage errors: an unknown --from, --dry-run without --from, -o without --to, an unknown --to", async () => {
  const root = tempDir("ts-foreign-root-");
  const file = join(FIXTURES, "codex/v0.129.0-turn-2.jsonl");
  expect((await cli(["--root", root, "import", "--from", "gemini", file])).code).toBe(2);
  expect((await cli(["--root", root, "import", "--dry-run", file])).code).toBe(2);
  const imported = await cli(["--root", root, "import", "--from", "codex", file, "--json"]);
  const id = imported.records[0]!.id as string;
  expect((await cli(["--root", root, "export", id, "-o", join(root, "x")])).code).toBe(2);
  const unknown = await cli(["--root", root, "export", id, "--to", "pdf"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("claude-code");
});

it("export --to codex -o onto a file that exists is OUTPUT_EXISTS, the file untouched", async () => {
  const root = tempDir("ts-foreign-root-");
  const imported = await cli(["--root", root, "import", "--from", "codex", join(FIXTURES, "codex/v0.129.0-turn-2.jsonl"), "--json"]);
  const target = join(tempDir("ts-foreign-out-"), "taken.jsonl");
  writeFileSync(target, "mine\n");
  const out = await cli(["--root", root, "export", imported.records[0]!.id, "--to", "codex", "-o", target]);
  expect(out.code).toBe(1);
  expect(out.stderr).toContain("OUTPUT_EXISTS");
  expect(readFileSync(target, "utf8")).toBe("mine\n");
});

describeBackends("subagents", { cli: true }, (backend) => {
  it("ls --json names the parent of a subagent's session; show marks the entry that spawned it", async () => {
    const args = backend.cliArgs!(await backend.options());
    const imported = await cli([...args, "import", "--from", "claude-code", join(FIXTURES, "subagents/claude-code"), "--json"]);
    expect(imported.code).toBe(0);
    const [parent, child] = imported.records.sort((a, b) => String(a.path).length - String(b.path).length);
    const ls = await cli([...args, "ls", "--all", "--json"]);
    expect(ls.records.find((r) => r.id === child!.id)).toMatchObject({ parentSession: parent!.id });
    expect(ls.records.find((r) => r.id === parent!.id)!.parentSession).toBeNull();
    const show = await cli([...args, "show", parent!.id]);
    expect(show.code).toBe(0);
    expect(show.stdout.split("\n").filter((l) => l.includes(`[subagent ${child!.id}]`))).toHaveLength(1);
    expect(show.stdout).toMatch(new RegExp(`^[0-9a-f]{8} message/toolResult \\[subagent ${child!.id}\\]`, "m"));
  });
});

it("export --to codex --branch converts a native session's path to that entry (-o a new file); kept entries warned", async () => {
  const s = await viewsSession();
  const file = join(tempDir("ts-foreign-out-"), "rollout.jsonl");
  const out = await cli(["--root", s.root, "export", s.m.sessionId, "--to", "codex", "--branch", s.ids.otherLeaf, "-o", file]);
  expect(out.code).toBe(0);
  expect(out.stdout).toBe("");
  expect(out.stderr).toContain("EXTENSION_KEPT");
  const prompts = (recordsOf(readFileSync(file, "utf8")) as Array<{ type: string; payload: Record<string, unknown> }>)
    .filter((r) => r.type === "event_msg" && r.payload.type === "user_message")
    .map((r) => r.payload.message);
  expect(prompts).toContain("Other branch question.");
  expect(prompts).not.toContain("Active branch follow-up.");
  const again = await cli(["--root", s.root, "export", s.m.sessionId, "--to", "codex", "-o", file]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("OUTPUT_EXISTS");
});
