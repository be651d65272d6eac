import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundle, unbundle } from "../../src/index.ts";
import { importClaudeCode } from "../../src/interchange/import-foreign.ts";
import { redactSessionFile } from "../../src/maintenance/redact-file.ts";
import { rekeySessionFile } from "../../src/maintenance/rekey.ts";
import { SecretRedactor } from "../../src/prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../../src/prepare/secret-rules.ts";
import { keyIdOf } from "../../src/crypto/line-cipher.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { runTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";
import { bytesOf, makeSession, treeOf } from "../bundle/helpers/bundle-fixtures.ts";

const CHILD = join(import.meta.dirname, "helpers/lifecycle-crash-child.ts");

/** Lock directories the killed child left look as old as a dead writer's. */
function ageLocks(dir: string): void {
  if (!existsSync(dir)) return;
  const old = new Date(Date.now() - 3_600_000);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.name.endsWith(".lock")) utimesSync(p, old, old);
    else if (e.isDirectory()) ageLocks(p);
  }
}

/** A tree without the session lock's leftovers of a killed process (the lock's own reclaiming). */
function withoutLocks(tree: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).filter(([k]) => !/\.lock(\.json)?(\/|$)|\.lock\.json\.\d+\.[0-9a-f]+\.tmp$/.test(k)));
}

async function runKilledAt(op: string, root: string, ref: string, killAt: number): Promise<boolean> {
  process.env.TS_KILL_AT = String(killAt);
  const run = runTs(CHILD, [op, root, ref]);
  delete process.env.TS_KILL_AT;
  const r = await run;
  if (r.code === 0) return false;
  expect(r.code, `${op} at ${killAt}: ${r.stderr}`).toBe(null);
  return true;
}

describe("crash matrix: SIGKILL at every effectful step of an import", () => {
  it("unbundle: a later unbundle restores the whole bundle; no 0-byte session, no spool, nothing else left", {
    timeout: 600_000,
  }, async () => {
    const source = tempDir();
    const ids = [(await makeSession("/proj/a", { root: source }, 1)).id];
    const file = join(tempDir(), "b.tar");
    writeFileSync(file, await bytesOf(bundle(ids, { root: source })));
    const clean = tempDir();
    await unbundle(file, { root: clean });
    const expected = treeOf(join(clean, "sessions"));
    let kills = 0;
    for (let killAt = 0; ; killAt++) {
      expect(killAt, "the unbundle never finished").toBeLessThan(400);
      const root = tempDir();
      const killed = await runKilledAt("unbundle", root, file, killAt);
      const label = `unbundle killed at effect ${killAt}`;
      ageLocks(root);
      const again = await unbundle(file, { root });
      expect(
        again.sessions.map((s) => s.status).every((s) => s === "created" || s === "unchanged" || s === "appended"),
        label,
      ).toBe(true);
      expect(withoutLocks(treeOf(join(root, "sessions"))), label).toEqual(expected);
      expect(
        readdirSync(root).filter((n) => n.startsWith(".")),
        `${label}: spool left`,
      ).toEqual([]);
      if (!killed) break;
      kills++;
    }
    expect(kills, "too few kill points").toBeGreaterThan(8);
    console.log(`unbundle: ${kills} kill points, lost = 0`);
  });
});

const REDACTION_KEY = Buffer.alloc(32, 7);
const KEY_A = Buffer.alloc(32, 1);
const KEY_B = Buffer.alloc(32, 2);
const GH = "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";

/** Files under `dir` holding `needle`, lock leftovers aside. */
function holding(dir: string, needle: string): string[] {
  return Object.keys(withoutLocks(treeOf(dir))).filter((k) => readFileSync(join(dir, k)).includes(needle));
}

/** Dot temp files (`.*.tmp`) under `dir`, lock leftovers aside: what a killed rewrite may not leave for good. */
function temps(dir: string): string[] {
  return Object.keys(withoutLocks(treeOf(dir))).filter((k) => /(^|\/)\.[^/]*\.tmp(\/|$)/.test(k));
}

const texts = (m: SessionManager) => m.getEntries().map((e) => JSON.stringify((e as { message?: unknown }).message));

describe("crash matrix: SIGKILL at every effectful step of a rewrite", () => {
  it("import --from claude-code: a later import restores it whole; nothing else left", { timeout: 600_000 }, async () => {
    const file = join(import.meta.dirname, "../fixtures/foreign/claude-code/v2.1.7-summaries.jsonl");
    const clean = tempDir();
    await importClaudeCode(file, { root: clean });
    const expected = treeOf(join(clean, "sessions"));
    let kills = 0;
    for (let killAt = 0; ; killAt++) {
      expect(killAt, "the import never finished").toBeLessThan(400);
      const root = tempDir();
      const killed = await runKilledAt("import-claude-code", root, file, killAt);
      ageLocks(root);
      await importClaudeCode(file, { root });
      expect(withoutLocks(treeOf(join(root, "sessions"))), `import killed at effect ${killAt}`).toEqual(expected);
      if (!killed) break;
      kills++;
    }
    expect(kills, "too few kill points").toBeGreaterThan(4);
    console.log(`import --from claude-code: ${kills} kill points, lost = 0`);
  });

  it("redact: the file is its original or wholly redacted; a second run leaves no secret in any file", { timeout: 600_000 }, async () => {
    let kills = 0;
    for (let killAt = 0; ; killAt++) {
      expect(killAt, "redact never finished").toBeLessThan(400);
      const root = tempDir();
      const m = await SessionManager.create("/secret", { root });
      m.appendMessage({ role: "user", content: `push with ${GH}` });
      m.appendMessage({ role: "user", content: "and nothing else" });
      m.artifacts!.save(`token ${GH}\n`, { toolType: "bash" });
      await m.close();
      const path = m.sessionFile!;
      const original = readFileSync(path);
      const before = texts(await SessionManager.open(path, { root, readOnly: true }));
      const killed = await runKilledAt("redact", root, path, killAt);
      const label = `redact killed at effect ${killAt}`;
      const now = readFileSync(path);
      if (!now.equals(original)) expect(now.includes(GH), `${label}: half redacted`).toBe(false);
      ageLocks(root);
      const redactor = new SecretRedactor(BUILTIN_SECRET_RULES, () => REDACTION_KEY);
      await redactSessionFile(path, { redactor, sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs") });
      expect(holding(join(root, "sessions"), GH), label).toEqual([]);
      expect(temps(join(root, "sessions")), `${label}: temps`).toEqual([]);
      const after = await SessionManager.open(path, { root });
      expect(texts(after).length, label).toBe(before.length);
      await after.close();
      if (!killed) break;
      kills++;
    }
    expect(kills, "too few kill points").toBeGreaterThan(4);
    console.log(`redact: ${kills} kill points, lost = 0`);
  });

  it("rekey: the session opens whole under the old key or the new; a second run finishes it", { timeout: 600_000 }, async () => {
    let kills = 0;
    for (let killAt = 0; ; killAt++) {
      expect(killAt, "rekey never finished").toBeLessThan(400);
      const root = tempDir();
      const m = await SessionManager.create("/keyed", { root, encryption: { key: KEY_A } });
      m.appendMessage({ role: "user", content: "rekey me: marmalade" });
      m.appendMessage({ role: "user", content: "twice" });
      m.artifacts!.save("sealed artifact\n", { toolType: "bash" });
      await m.close();
      const path = m.sessionFile!;
      const before = texts(await SessionManager.open(path, { root, readOnly: true, encryption: { key: KEY_A } }));
      const killed = await runKilledAt("rekey", root, path, killAt);
      const label = `rekey killed at effect ${killAt}`;
      ageLocks(root);
      const keyId = (JSON.parse(readFileSync(path, "utf8").split("\n")[0]!) as { encryption: { keyId: string } }).encryption.keyId;
      const current = keyId === keyIdOf(KEY_A) ? KEY_A : KEY_B;
      expect(texts(await SessionManager.open(path, { root, readOnly: true, encryption: { key: current } })), label).toEqual(before);
      if (current === KEY_A)
        await rekeySessionFile(path, {
          from: { key: KEY_A, keyId: keyIdOf(KEY_A) },
          to: { key: KEY_B, keyId: keyIdOf(KEY_B) },
          blobsDir: join(root, "blobs"),
        });
      const after = await SessionManager.open(path, { root, encryption: { key: KEY_B } });
      expect(texts(after), label).toEqual(before);
      expect(after.artifacts!.getText("0"), label).toBe("sealed artifact\n");
      await after.close();
      expect(temps(join(root, "sessions")), `${label}: temps`).toEqual([]);
      if (!killed) break;
      kills++;
    }
    expect(kills, "too few kill points").toBeGreaterThan(4);
    console.log(`rekey: ${kills} kill points, lost = 0`);
  });
});
