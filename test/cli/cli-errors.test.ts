import { spawn } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const BIN = join(REPO_ROOT, "bin/transcript-store.mjs");
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/**
 * Runs the CLI as a real child process with `stdin` piped in. `nobody`: through `runuser -u nobody`
 * when we are root (permission bits do not bind root), else as ourselves.
 */
function run(
  argv: string[],
  options: { stdin?: string; nobody?: boolean; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const node = [process.execPath, BIN, ...argv];
  const [cmd, ...args] = options.nobody && asRoot ? ["runuser", "-u", "nobody", "--", ...node] : node;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, TRANSCRIPT_STORE_URL: "", TRANSCRIPT_STORE_HOME: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

async function store() {
  const root = tempDir("ts-clierr-");
  const cwd = join(root, "proj");
  const m = await SessionManager.create(cwd, { root });
  m.appendMessage({ role: "user", content: "hello" });
  m.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }] });
  await m.close();
  return { root, cwd, m, file: m.sessionFile! };
}

/** Every file under `dir`, with its bytes: what a command must leave as it was. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) out[join(e.parentPath, e.name)] = readFileSync(join(e.parentPath, e.name), "base64");
  return out;
}

/** Hands the tree to `nobody` (so it can be read when allowed), then takes read access from `unreadable`. */
function lockOut(root: string, unreadable: string): void {
  if (asRoot) {
    chownSync(root, NOBODY, NOBODY);
    for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) chownSync(join(e.parentPath, e.name), NOBODY, NOBODY);
  }
  chmodSync(unreadable, 0o000);
}

describe("errors that used to hide (real CLI processes)", () => {
  it("an unreadable sessions dir or bucket: ls exits 1 with the reason, show says it cannot read (not SESSION_NOT_FOUND)", async () => {
    const { root, cwd, m } = await store();
    const sessions = join(root, "sessions");
    const bucket = join(sessions, readdirSync(sessions)[0]!);
    lockOut(root, bucket);
    const ls = await run(["ls", "--all", "--root", root], { nobody: true });
    expect(ls.code).toBe(1);
    expect(ls.stderr).toContain("EACCES");
    const lsCwd = await run(["ls", cwd, "--root", root, "--json"], { nobody: true });
    expect(lsCwd.code).toBe(1);
    const show = await run(["show", m.sessionId, "--root", root], { nobody: true });
    expect(show.code).toBe(1);
    expect(show.stderr).toMatch(/PERSISTENCE_FAILED: .*EACCES/);
    expect(show.stderr).not.toContain("SESSION_NOT_FOUND");
    chmodSync(bucket, 0o755);
    chmodSync(sessions, 0o000);
    const lsRoot = await run(["ls", "--all", "--root", root], { nobody: true });
    expect([lsRoot.code, lsRoot.stderr.includes("EACCES")]).toEqual([1, true]);
    const export_ = await run(["export", m.sessionId, "--root", root], { nobody: true });
    expect(export_.code).toBe(1);
    expect(export_.stderr).toContain("PERSISTENCE_FAILED");
    expect(export_.stdout).toBe("");
    chmodSync(sessions, 0o755);
    expect((await run(["ls", "--all", "--root", root], { nobody: true })).code).toBe(0);
  });

  it("a --root, --sessions-dir, gc --blobs-dir or --also that does not exist: exit 2, nothing scanned or created", async () => {
    const { root } = await store();
    const before = snapshot(root);
    const missing = join(root, "no-such-dir");
    for (const argv of [
      ["ls", "--all", "--root", missing],
      ["ls", "--root", missing],
      ["stats", "--root", missing],
      ["show", "abc", "--root", missing],
      ["gc", "--root", root, "--sessions-dir", missing],
      ["gc", "--root", root, "--blobs-dir", missing],
      ["gc", "--root", root, "--also", missing],
      ["verify", "--root", missing],
    ]) {
      const r = await run(argv);
      expect([argv.join(" "), r.code]).toEqual([argv.join(" "), 2]);
      expect(r.stderr).toContain(missing);
      expect(r.stdout).toBe("");
    }
    expect(snapshot(root)).toEqual(before);
    // A command that creates a store may name a new one.
    const fresh = join(root, "new-store");
    const exported = await run(["export", (await SessionManager.listAll({ root }))[0]!.id, "--root", root]);
    expect((await run(["import", "--root", fresh], { stdin: exported.stdout })).code).toBe(0);
  });

  it("show and verify say what a Claude Code or Codex file is, with the way forward", async () => {
    const dir = tempDir("ts-clierr-");
    const claude = join(dir, "claude.jsonl");
    writeFileSync(
      claude,
      `${JSON.stringify({ type: "summary", summary: "s", leafUuid: "u2" })}\n` +
        `${JSON.stringify({ parentUuid: null, uuid: "u1", sessionId: "s1", type: "user", message: { role: "user", content: "hi" } })}\n`,
    );
    const codex = join(dir, "rollout-2026-01-01T00-00-00-x.jsonl");
    writeFileSync(
      codex,
      `${JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", type: "session_meta", payload: { id: "x", cwd: "/p" } })}\n` +
        `${JSON.stringify({ timestamp: "2026-01-01T00:00:01Z", type: "response_item", payload: { type: "message" } })}\n`,
    );
    for (const [file, what] of [
      [claude, "Claude Code transcript"],
      [codex, "Codex rollout"],
    ] as const) {
      const show = await run(["show", file]);
      expect(show.code).toBe(1);
      expect(show.stderr).toContain("BAD_HEADER");
      expect(show.stderr).toContain(`looks like a ${what}`);
      expect(show.stderr).toContain("transcript-store import --from");
      const imported = await run(["import", "--root", dir], { stdin: readFileSync(file, "utf8") });
      expect(imported.code).toBe(1);
      expect(imported.stderr).toContain("BAD_HEADER");
      expect(imported.stderr).toContain(`looks like a ${what}`);
      const verify = await run(["verify", file, "--json"]);
      expect(verify.code).toBe(1);
      const finding = JSON.parse(verify.stdout.split("\n")[0]!);
      expect(finding).toMatchObject({ kind: "BAD_HEADER" });
      expect(finding.message).toContain(`looks like a ${what}`);
    }
    // A file that is none of these still says it is not a session.
    const other = join(dir, "other.jsonl");
    writeFileSync(other, '{"hello":1}\n');
    const show = await run(["show", other]);
    expect([show.code, show.stderr.includes("BAD_HEADER"), show.stderr.includes("looks like")]).toEqual([1, true, false]);
  });

  it("import with empty input says there was no input (NO_INPUT), not BAD_HEADER, and creates nothing", async () => {
    const root = tempDir("ts-clierr-");
    for (const stdin of ["", "\n\n"]) {
      const r = await run(["import", "--root", root], { stdin });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("NO_INPUT");
      expect(r.stderr).not.toContain("BAD_HEADER");
    }
    expect(readdirSync(root)).toEqual([]);
  });

  it("export | import into the same store reports the session as already there, unchanged; a different one is a conflict", async () => {
    const { root, m, file } = await store();
    const before = readFileSync(file);
    const exported = await run(["export", m.sessionId, "--root", root]);
    expect(exported.code).toBe(0);
    const again = await run(["import", "--root", root, "--json"], { stdin: exported.stdout });
    expect([again.code, again.stderr]).toEqual([0, ""]);
    expect(JSON.parse(again.stdout)).toMatchObject({ type: "unchanged", id: m.sessionId, path: file });
    const text = await run(["import", "--root", root], { stdin: exported.stdout });
    expect(text.stdout).toContain(`unchanged ${m.sessionId}`);
    expect(readFileSync(file)).toEqual(before);
    const lines = exported.stdout.split("\n").filter(Boolean);
    const changed = [...lines.slice(0, -1), lines.at(-1)!.replace('"hi"', '"bye"')].join("\n");
    const conflict = await run(["import", "--root", root], { stdin: changed });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain("IMPORT_CONFLICT");
    expect(readFileSync(file)).toEqual(before);
  });

  it("IMPORT_CONFLICT on a first import does not speak of a last import", async () => {
    const { root, file } = await store();
    // A source with the store copy's id and name, never imported before, that diverged from it.
    const src = tempDir("ts-clierr-src-");
    const source = join(src, basename(file));
    copyFileSync(file, source);
    const lines = readFileSync(source, "utf8").split("\n").filter(Boolean);
    writeFileSync(source, `${[...lines.slice(0, -1), lines.at(-1)!.replace('"hi"', '"bye"')].join("\n")}\n`);
    const migrate = await run(["migrate", source, "--root", root, "--json"]);
    expect(migrate.code).toBe(1);
    const conflict = migrate.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((r) => r.error?.code === "IMPORT_CONFLICT");
    expect(conflict).toBeDefined();
    expect(conflict.error.message).not.toMatch(/last import/);
  });
});
