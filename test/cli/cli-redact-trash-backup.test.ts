import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

/*
 * Outside review of issue 32 #15: `redact --backup` of a trashed session writes `<file>.bak` inside
 * its trash entry, a name the entry's journal did not list when `rm` moved it. `purge` deletes it
 * with the entry (no secret left, no entry left half-removed), and `restore` brings it back beside
 * the session, where a backup belongs.
 */

const GH = "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";

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

async function leaky(root: string) {
  const m = await SessionManager.create(join(root, "proj"), { root });
  m.appendMessage({ role: "user", content: `push with ${GH}` });
  await m.close();
  return m;
}

describe("redact --backup of a trashed session, then purge or restore", () => {
  it("purge --all deletes the backup with the entry: no secret, no entry left", async () => {
    const root = tempDir("ts-trash-bak-");
    const m = await leaky(root);
    expect((await cli(["rm", m.sessionId, "--root", root])).code).toBe(0);
    const run = await cli(["redact", m.sessionId, "--root", root, "--backup", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(filesHolding(root, GH).length).toBe(1); // the backup, in the trash entry
    const purge = await cli(["purge", "--all", "--root", root, "--json"]);
    expect([purge.code, purge.stderr]).toEqual([0, ""]);
    expect(filesHolding(root, GH)).toEqual([]);
    expect(readdirSync(join(root, "trash"))).toEqual([]);
  });

  it("restore brings the backup back beside the session and leaves no entry", async () => {
    const root = tempDir("ts-trash-bak-");
    const m = await leaky(root);
    expect((await cli(["rm", m.sessionId, "--root", root])).code).toBe(0);
    expect((await cli(["redact", m.sessionId, "--root", root, "--backup"])).code).toBe(0);
    const restore = await cli(["restore", m.sessionId, "--root", root, "--json"]);
    expect([restore.code, restore.stderr]).toEqual([0, ""]);
    expect(readdirSync(join(root, "trash"))).toEqual([]);
    expect(filesHolding(root, GH)).toEqual([`${m.sessionFile!.slice(root.length + 1)}.bak`]);
  });
});
