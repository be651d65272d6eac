import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { runTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/lifecycle-crash-child.ts");
const summary: string[] = [];

/**
 * Every file under `dir` with its bytes, the session lock's leftovers of a killed process left out
 * (the lock directory, its declaration and that declaration's temp: the lock's own reclaiming).
 */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.endsWith(".lock") || e.name.endsWith(".lock.json") || /\.lock\.json\.\d+\.[0-9a-f]+\.tmp$/.test(e.name)) continue;
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else out.set(r, readFileSync(join(d, e.name)).toString("base64"));
    }
  };
  walk(dir, "");
  return out;
}

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

interface Fixture {
  root: string;
  sessions: Array<{ id: string; path: string }>;
  before: Map<string, string>;
}

/** Two sessions, each with an artifact and a backup; the first archived (its flag must survive every kill). */
async function fixture(): Promise<Fixture> {
  const root = tempDir();
  const sessions: Fixture["sessions"] = [];
  for (const cwd of ["/crash/a", "/crash/b"]) {
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: `keep ${cwd}`, timestamp: 1 } as never);
    m.artifacts!.save(`artifact of ${cwd}\n`, { toolType: "bash" });
    await m.close();
    writeFileSync(`${m.location!}.bak`, `backup of ${cwd}\n`);
    sessions.push({ id: m.sessionId, path: m.location! });
  }
  await Lifecycle.open({ root }).archive(sessions[0]!.id);
  return { root, sessions, before: snapshot(join(root, "sessions")) };
}

/** The files of the session at `path` in a snapshot of the sessions tree. */
function partsOf(snap: Map<string, string>, path: string, root: string): Map<string, string> {
  const rel = path.slice(join(root, "sessions").length + 1).replace(/\.jsonl$/, "");
  return new Map([...snap].filter(([k]) => k.startsWith(rel)));
}

/**
 * Checks what the kill left before any recovery ran: a session file in place always has every
 * part it had (a writer opening it now must not start a second artifacts directory).
 */
function expectLiveSessionsWhole(f: Fixture, label: string): void {
  const now = snapshot(join(f.root, "sessions"));
  for (const s of f.sessions)
    if (existsSync(s.path))
      expect(partsOf(now, s.path, f.root), `${label}: ${s.path} is live without all its parts`).toEqual(partsOf(f.before, s.path, f.root));
}

/** After recovery each session is whole in place or whole in the trash; nothing else is left. */
async function expectRecovered(f: Fixture, label: string, allowGone = false): Promise<string[]> {
  ageLocks(f.root);
  const life = Lifecycle.open({ root: f.root });
  const trash = await life.listTrash();
  const where: string[] = [];
  const gone: string[] = [];
  for (const s of f.sessions) {
    const inTrash = trash.filter((e) => e.sessionId === s.id);
    if (existsSync(s.path)) {
      expect(inTrash, `${label}: ${s.id} both in place and in the trash`).toEqual([]);
      where.push("place");
    } else if (inTrash.length === 1) {
      await life.restore(inTrash[0]!.trashId);
      where.push("trash");
    } else {
      expect(allowGone, `${label}: ${s.id} is neither in place nor in the trash`).toBe(true);
      gone.push(s.id);
      where.push("gone");
    }
  }
  const expected = new Map(
    [...f.before].filter(([k]) => !f.sessions.some((s) => gone.includes(s.id) && partsOf(f.before, s.path, f.root).has(k))),
  );
  expect(snapshot(join(f.root, "sessions")), `${label}: sessions tree`).toEqual(expected);
  expect(existsSync(join(f.root, "trash")) ? readdirSync(join(f.root, "trash")) : [], `${label}: left in the trash`).toEqual([]);
  // the archive flag went wherever its session went, and came back with it
  const flags = await life.flags();
  expect(flags.get(f.sessions[0]!.id)?.archived ?? false, `${label}: archive flag`).toBe(!gone.includes(f.sessions[0]!.id));
  expect(flags.has(f.sessions[1]!.id), `${label}: flags of the second session`).toBe(false);
  // a writer may open every session again and its next artifact does not reuse an old id
  for (const s of f.sessions.filter((x) => !gone.includes(x.id))) {
    const m = await SessionManager.open(s.path, { root: f.root });
    expect(m.artifacts!.save("next\n", { toolType: "bash" }).id, `${label}: artifact id reused`).not.toBe("0");
    await m.close();
  }
  return where;
}

async function runKilledAt(op: string, root: string, ref: string, killAt: number): Promise<boolean> {
  process.env.TS_KILL_AT = String(killAt);
  const run = runTs(CHILD, [op, root, ref]);
  delete process.env.TS_KILL_AT;
  const r = await run;
  if (r.code === 0) {
    expect(r.stdout).toBe("done\n");
    return false;
  }
  expect(r.code, `${op} at ${killAt}: ${r.stderr}`).toBe(null);
  return true;
}

describe("crash matrix: SIGKILL at every effectful step of a lifecycle move", () => {
  for (const op of ["rm", "prune", "restore", "purge"] as const) {
    it(`${op}: lost = 0, every live session whole at every moment, nothing left behind`, { timeout: 600_000 }, async () => {
      let kills = 0;
      const outcomes = new Set<string>();
      for (let killAt = 0; ; killAt++) {
        expect(killAt, "the operation never finished").toBeLessThan(300);
        const f = await fixture();
        const ids = f.sessions.map((s) => s.id).join(",");
        if (op === "restore" || op === "purge") for (const s of f.sessions) await Lifecycle.open({ root: f.root }).rm(s.id);
        const killed = await runKilledAt(op, f.root, ids, killAt);
        const label = `${op} killed at effect ${killAt}`;
        expectLiveSessionsWhole(f, label);
        for (const w of await expectRecovered(f, label, op === "purge")) outcomes.add(w);
        if (!killed) break;
        kills++;
      }
      expect(kills, "too few kill points").toBeGreaterThan(4);
      summary.push(`${op}: ${kills} kill points, outcomes ${[...outcomes].sort().join("/")}, lost = 0`);
    });
  }
  it("summary", () => console.log(summary.join("\n")));
});
