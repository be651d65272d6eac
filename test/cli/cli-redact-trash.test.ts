import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const GH = "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";

/** Every file under `dir` holding `needle` (relative names). */
function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else if (readFileSync(join(d, e.name)).includes(needle)) out.push(r);
    }
  };
  walk(dir, "");
  return out.sort();
}

async function leaky(root: string, cwd: string) {
  const m = await SessionManager.create(join(root, cwd), { root });
  m.appendMessage({ role: "user", content: `push with ${GH}` });
  m.artifacts!.save(`token ${GH}\n`, { toolType: "bash" });
  await m.close();
  return m;
}

describe("redact covers the trash and names its backups (issue 32 #15)", () => {
  it("redact (no argument) scrubs trashed sessions too; restore does not bring the secret back", async () => {
    const root = tempDir();
    const live = await leaky(root, "a");
    const gone = await leaky(root, "b");
    expect((await cli(["rm", gone.sessionId, "--root", root])).code).toBe(0);
    const run = await cli(["redact", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(run.records.find((r) => r.type === "totals")).toMatchObject({ files: 2, rewritten: 2 });
    expect(filesHolding(root, GH)).toEqual([]);
    expect((await cli(["restore", gone.sessionId, "--root", root])).code).toBe(0);
    expect(filesHolding(root, GH)).toEqual([]);
    expect(live.sessionId).not.toBe(gone.sessionId);
  });

  it("redact <trashed id> works", async () => {
    const root = tempDir();
    const gone = await leaky(root, "c");
    expect((await cli(["rm", gone.sessionId, "--root", root])).code).toBe(0);
    const run = await cli(["redact", gone.sessionId, "--root", root, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.records.find((r) => r.type === "totals")).toMatchObject({ files: 1, rewritten: 1 });
    expect(filesHolding(root, GH)).toEqual([]);
  });

  it("redact --backup names the backup file it wrote; purge --all leaves no backup behind", async () => {
    const root = tempDir();
    const m = await leaky(root, "d");
    const run = await cli(["redact", m.sessionId, "--root", root, "--backup", "--json"]);
    expect(run.code).toBe(0);
    expect(run.records.find((r) => r.type === "file")).toMatchObject({ backup: `${m.sessionFile!}.bak` });
    const text = await cli(["redact", m.sessionId, "--root", root, "--backup"]);
    expect(text.code).toBe(0);
    // nothing left to find: no rewrite, so no backup either
    expect(text.stdout).not.toContain(".bak");
    expect(filesHolding(root, GH)).toEqual([`${m.sessionFile!.slice(root.length + 1)}.bak`]);
    expect((await cli(["rm", m.sessionId, "--root", root])).code).toBe(0);
    expect((await cli(["purge", "--all", "--root", root])).code).toBe(0);
    expect(filesHolding(root, GH)).toEqual([]);
  });
});
