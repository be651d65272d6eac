import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentFilePath, claudeProjectSlug } from "../../src/interchange/agent-paths.ts";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const CODEX = join(import.meta.dirname, "../fixtures/foreign/codex/v0.129.0-turn-2.jsonl");

async function native(root: string, cwd: string) {
  const m = await SessionManager.create(cwd, { root });
  m.appendMessage({ role: "user", content: "Hello there.", timestamp: Date.parse("2026-07-01T08:00:00Z") });
  m.appendMessage({
    role: "assistant",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    content: [{ type: "text", text: "Hi." }],
    stopReason: "stop",
    timestamp: Date.parse("2026-07-01T08:00:01Z"),
  } as never);
  const out = { id: m.sessionId, cwd: m.header.cwd };
  await m.close();
  return out;
}

const metaOf = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((r) => r.type === "session_meta");

describe("export files the session where the agent resumes it; Codex's provider is the caller's", () => {
  it("Claude Code's project directory is the cwd with every non-alphanumeric character as '-'", () => {
    expect(claudeProjectSlug("/home/u/my proj.x_y")).toBe("-home-u-my-proj-x-y");
    const rec = { type: "user", uuid: "u1", sessionId: "s1", cwd: "/a/b", isSidechain: false };
    expect(agentFilePath("claude-code", [{ type: "file-history-snapshot" }, rec], { HOME: "/h" })).toBe(
      "/h/.claude/projects/-a-b/s1.jsonl",
    );
    expect(agentFilePath("claude-code", [{ ...rec, isSidechain: true, agentId: "a1" }], { HOME: "/h", CLAUDE_CONFIG_DIR: "/c" })).toBe(
      "/c/projects/-a-b/s1/subagents/agent-a1.jsonl",
    );
    const meta = { type: "session_meta", timestamp: "x", payload: { id: "0199", timestamp: "2026-05-12T09:59:55.000Z" } };
    expect(agentFilePath("codex", [meta], { CODEX_HOME: "/x" })).toBe("/x/sessions/2026/05/12/rollout-2026-05-12T09-59-55-0199.jsonl");
  });

  it("--install writes the Claude Code transcript under ~/.claude/projects/<slug>/<id>.jsonl, never over a file", async () => {
    const root = tempDir();
    const home = tempDir();
    const s = await native(root, join(root, "my project"));
    const env = { HOME: home };
    const plain = await cli(["export", s.id, "--to", "claude-code", "--no-redact", "--root", root], { env });
    const installed = await cli(["export", s.id, "--to", "claude-code", "--no-redact", "--install", "--root", root], { env });
    expect(installed.code).toBe(0);
    const target = join(home, ".claude", "projects", claudeProjectSlug(s.cwd), `${s.id}.jsonl`);
    expect(installed.stdout.trim()).toBe(target);
    expect(readFileSync(target, "utf8")).toBe(plain.stdout);
    const again = await cli(["export", s.id, "--to", "claude-code", "--no-redact", "--install", "--root", root], { env });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/OUTPUT_EXISTS|already exists/);
    expect(readFileSync(target, "utf8")).toBe(plain.stdout);
  });

  it("--install --codex-provider writes the rollout under $CODEX_HOME/sessions/YYYY/MM/DD with that model_provider", async () => {
    const root = tempDir();
    const codexHome = tempDir();
    const s = await native(root, join(root, "p"));
    const out = await cli(["export", s.id, "--to", "codex", "--install", "--codex-provider", "ollama", "--root", root], {
      env: { CODEX_HOME: codexHome },
    });
    expect(out.code).toBe(0);
    const target = out.stdout.trim();
    expect(existsSync(target)).toBe(true);
    const meta = metaOf(readFileSync(target, "utf8"));
    expect(meta.payload.model_provider).toBe("ollama");
    // the day directories and the name's time are the session_meta's (UTC), the id is the thread's
    const t = (meta.payload.timestamp as string).slice(0, 19).replace(/:/g, "-");
    const day = [t.slice(0, 4), t.slice(5, 7), t.slice(8, 10)];
    expect(target).toBe(join(codexHome, "sessions", ...day, `rollout-${t}-${s.id}.jsonl`));
    expect(meta.payload.id).toBe(s.id);
    // without the option: Codex's default
    const plain = await cli(["export", s.id, "--to", "codex", "--root", root]);
    expect(metaOf(plain.stdout).payload.model_provider).toBe("openai");
    const wrong = await cli(["export", s.id, "--to", "claude-code", "--codex-provider", "x", "--root", root]);
    expect(wrong.code).not.toBe(0);
  });

  it("an imported Codex rollout keeps its model_provider; --codex-provider sets it", async () => {
    const root = tempDir();
    const report = await importForeignFile("codex", CODEX, { root });
    const kept = await cli(["export", report.id, "--to", "codex", "--no-redact", "--root", root]);
    expect(metaOf(kept.stdout).payload.model_provider).toBe("openai");
    const set = await cli(["export", report.id, "--to", "codex", "--no-redact", "--codex-provider", "azure", "--root", root]);
    expect(set.code).toBe(0);
    const meta = metaOf(set.stdout);
    expect(meta.payload.model_provider).toBe("azure");
    expect(meta.payload.id).toBe(metaOf(kept.stdout).payload.id);
  });
});
