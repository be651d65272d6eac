import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundle, unbundle } from "../../src/index.ts";
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
