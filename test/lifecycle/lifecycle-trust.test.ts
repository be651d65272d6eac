import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { trashDirOf } from "../../src/lifecycle/file-trash.ts";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/index.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const DAY = 86_400_000;

async function session(root: string, cwd: string, text: string, at?: Date): Promise<SessionManager> {
  const m = await SessionManager.create(cwd, { root, ...(at ? { now: () => at } : {}) });
  m.appendMessage({ role: "user", content: text, timestamp: 1 } as never);
  m.artifacts!.save(`artifact of ${text}\n`, { toolType: "bash" });
  await m.close();
  return m;
}

/** Rewrites the header id of a session file in place (an id as a foreign transcript may carry it). */
function setHeaderId(path: string, id: string): void {
  const [header, ...rest] = readFileSync(path, "utf8").split("\n");
  writeFileSync(path, [JSON.stringify({ ...JSON.parse(header!), id }), ...rest].join("\n"));
}

/** Every path under `dir` (relative). */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      out.push(r);
      if (e.isDirectory()) walk(join(d, e.name), r);
    }
  };
  if (existsSync(dir)) walk(dir, "");
  return out.sort();
}

describe("trash entry names: only the file-safe form of an id names anything (issue 32 #4)", () => {
  it("an id holding ../ stays inside <root>/trash, lists, restores and purges", async () => {
    const outside = tempDir();
    const root = join(outside, "store");
    const m = await session(root, "/w/a", "escape");
    const hostile = "x/../../../escaped";
    setHeaderId(m.location!, hostile);
    const life = Lifecycle.open({ root });
    const entry = await life.rm(m.location!);
    expect(entry.trashId).not.toContain("/");
    expect(existsSync(join(trashDirOf(root), entry.trashId, "trash.json"))).toBe(true);
    expect(readdirSync(outside)).toEqual(["store"]);
    expect((await life.listTrash()).map((e) => e.sessionId)).toEqual([hostile]);
    await life.restore(entry.trashId);
    expect(existsSync(m.location!)).toBe(true);
    await life.rm(m.location!);
    expect((await life.purge({ all: true })).purged).toHaveLength(1);
    expect(tree(trashDirOf(root))).toEqual([]);
  });

  it("an id holding / neither fails rm nor aborts prune", async () => {
    const root = tempDir();
    const old = new Date(Date.now() - 30 * DAY);
    const a = await session(root, "/w/a", "slash", old);
    const b = await session(root, "/w/b", "plain", old);
    setHeaderId(a.location!, "team/run-1");
    const report = await Lifecycle.open({ root }).prune({ olderThanMs: DAY });
    expect(report.trashed.map((e) => e.sessionId).sort()).toEqual([b.sessionId, "team/run-1"].sort());
    expect(existsSync(a.location!)).toBe(false);
  });
});

describe("rm takes every backup along (issue 32 #15)", () => {
  it("<file>.bak, .2.bak and .3.bak go to the trash with the session; purge --all leaves none", async () => {
    const root = tempDir();
    const m = await session(root, "/w/bak", "backed up");
    for (const name of [".bak", ".2.bak", ".3.bak", ".12.bak"]) writeFileSync(`${m.location!}${name}`, `secret in ${name}\n`);
    const life = Lifecycle.open({ root });
    await life.rm(m.sessionId);
    expect(readdirSync(dirname(m.location!))).toEqual([]);
    await life.restore(m.sessionId);
    expect(readdirSync(dirname(m.location!)).filter((n) => n.endsWith(".bak")).length).toBe(4);
    await life.rm(m.sessionId);
    await life.purge({ all: true });
    expect(readdirSync(dirname(m.location!))).toEqual([]);
    expect(tree(trashDirOf(root))).toEqual([]);
  });
});

describe("flags belong to one session instance (issue 32 #3)", () => {
  it("purging a trash entry keeps the flags of a live session of the same id; prune keeps it", async () => {
    const root = tempDir();
    const old = new Date(Date.now() - 30 * DAY);
    const m = await session(root, "/w/flags", "twice", old);
    const copy = readFileSync(m.location!);
    const life = Lifecycle.open({ root });
    await life.archive(m.sessionId);
    await life.rm(m.sessionId);
    // the same session comes back live (as unbundle or import brings it), and is pinned
    writeFileSync(m.location!, copy);
    expect((await life.flags()).get(m.sessionId)?.archived ?? false).toBe(false);
    await life.pin(m.sessionId);
    const [entry] = await life.listTrash();
    await life.purge({ refs: [entry!.trashId] });
    expect((await life.flags()).get(m.sessionId)?.pinned).toBe(true);
    const report = await life.prune({ olderThanMs: DAY });
    expect(report.trashed).toEqual([]);
    expect(existsSync(m.location!)).toBe(true);
  });

  it("restore brings back the flags the session had when it was trashed", async () => {
    const root = tempDir();
    const m = await session(root, "/w/flags2", "archived");
    const life = Lifecycle.open({ root });
    await life.archive(m.sessionId);
    await life.rm(m.sessionId);
    expect((await life.flags()).has(m.sessionId)).toBe(false);
    await life.restore(m.sessionId);
    expect((await life.flags()).get(m.sessionId)?.archived).toBe(true);
  });
});

describe("prune re-checks activity at the moment of each move (issue 32 #6)", () => {
  it("a session resumed and closed after the plan is skipped, not trashed", async () => {
    const root = tempDir();
    const old = new Date(Date.now() - 30 * DAY);
    const first = await session(root, "/w/p", "first", new Date(old.getTime() - DAY));
    const second = await session(root, "/w/p", "second", old);
    let resumed = false;
    const life = Lifecycle.open({
      root,
      onTrashed: async (info) => {
        if (resumed || info.sessionId !== first.sessionId) return;
        resumed = true;
        const again = await SessionManager.open(second.location!, { root });
        again.appendMessage({ role: "user", content: "back at it", timestamp: Date.now() } as never);
        await again.close();
      },
    });
    const report = await life.prune({ olderThanMs: DAY });
    expect(resumed).toBe(true);
    expect(report.trashed.map((e) => e.sessionId)).toEqual([first.sessionId]);
    expect(existsSync(second.location!)).toBe(true);
    expect(report.skipped.map((s) => s.session.id)).toEqual([second.sessionId]);
  });
});

describe("the library keeps the usage ledger by default (issue 32 #27)", () => {
  const costly = {
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    provider: "anthropic",
    model: "claude-x",
    usage: {
      input: 100,
      output: 10,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 110,
      cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, total: 3 },
    },
    timestamp: 2,
  };
  const ledgerRows = (root: string) =>
    existsSync(join(root, "usage-ledger.jsonl"))
      ? readFileSync(join(root, "usage-ledger.jsonl"), "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { sessionId: string })
      : [];

  it("Lifecycle.open(…).prune() and .purge() record the deleted sessions' usage rows with no hooks", async () => {
    const root = tempDir();
    const old = new Date(Date.now() - 30 * DAY);
    const m = await SessionManager.create("/w/cost", { root, now: () => old });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 } as never);
    m.appendMessage(costly as never);
    await m.close();
    const life = Lifecycle.open({ root });
    expect((await life.prune({ olderThanMs: DAY })).trashed).toHaveLength(1);
    expect(ledgerRows(root).map((r) => r.sessionId)).toEqual([m.sessionId]);
    await life.purge({ all: true });
    expect(ledgerRows(root).map((r) => r.sessionId)).toEqual([m.sessionId]);
  });

  it("purge records what no trash recorded (a session trashed by an older version)", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/w/cost2", { root });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 } as never);
    m.appendMessage(costly as never);
    await m.close();
    await Lifecycle.open({ root, usageLedger: false } as never).rm(m.sessionId);
    expect(ledgerRows(root)).toEqual([]);
    await Lifecycle.open({ root }).purge({ all: true });
    expect(ledgerRows(root).map((r) => r.sessionId)).toEqual([m.sessionId]);
  });
});

describe.skipIf(!pgCluster())("prune re-checks activity at the moment of each move (PostgreSQL, issue 32 #6)", () => {
  it("a session resumed and closed after the plan is skipped, not trashed", { timeout: 60_000 }, async () => {
    const store = PostgresBackend.of(await freshDatabase());
    try {
      // the server stamps activity: a year from now, both are "older than a day" and the resume changes the facts
      const make = async (text: string) => {
        const m = await SessionManager.create("/w/pg", { store });
        m.appendMessage({ role: "user", content: text, timestamp: 1 } as never);
        await m.close();
        return m;
      };
      const first = await make("first");
      const second = await make("second");
      let resumed = false;
      const life = Lifecycle.open({
        store,
        now: () => new Date(Date.now() + 365 * DAY),
        usageLedger: false,
        onTrashed: async (info) => {
          if (resumed || info.sessionId !== first.sessionId) return;
          resumed = true;
          const again = await SessionManager.open(second.sessionId, { store });
          again.appendMessage({ role: "user", content: "back at it", timestamp: Date.now() } as never);
          await again.close();
        },
      });
      const report = await life.prune({ olderThanMs: DAY });
      expect(resumed).toBe(true);
      expect(report.trashed.map((e) => e.sessionId)).toEqual([first.sessionId]);
      expect(report.skipped.map((s) => [s.session.id, s.reason])).toEqual([[second.sessionId, "changed"]]);
    } finally {
      await store.close();
    }
  });
});
