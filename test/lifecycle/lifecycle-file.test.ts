import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { trashDirOf } from "../../src/lifecycle/file-trash.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { tempDir } from "../support/temp-dir.ts";
import { expectCode } from "../support/error-code.ts";

/** Every file under `dir` with its bytes (relative names). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else out.set(r, readFileSync(join(d, e.name)).toString("base64"));
    }
  };
  walk(dir, "");
  return out;
}

async function session(root: string, cwd: string, text: string, at?: Date): Promise<SessionManager> {
  const m = await SessionManager.create(cwd, { root, ...(at ? { now: () => at } : {}) });
  m.appendMessage({ role: "user", content: text, timestamp: 1 } as never);
  m.appendMessage({ role: "assistant", content: [{ type: "text", text: `re ${text}` }], timestamp: 2 } as never);
  return m;
}

describe("Lifecycle on the file tree", () => {
  it("rm → restore puts the session file and its artifacts back byte for byte", async () => {
    const root = tempDir();
    const m = await session(root, "/work/a", "hello");
    m.artifacts!.save("tool output bytes\n", { toolType: "bash" });
    expect(readdirSync(m.artifactsDir!).length).toBeGreaterThan(0);
    await m.close();
    const before = snapshot(join(root, "sessions"));
    const life = Lifecycle.open({ root });
    const entry = await life.rm(m.sessionId);
    expect(existsSync(m.location!)).toBe(false);
    expect(await SessionManager.listAll({ root })).toEqual([]);
    expect((await life.listTrash()).map((e) => e.sessionId)).toEqual([m.sessionId]);
    expect(entry.bytes).toBeGreaterThan(0);
    const restored = await life.restore(m.sessionId);
    expect(restored.path).toBe(m.location);
    expect(snapshot(join(root, "sessions"))).toEqual(before);
    expect(await life.listTrash()).toEqual([]);
    expect(readdirSync(trashDirOf(root))).toEqual([]);
  });

  it("a trashed session keeps its blobs alive through gc until it is purged", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/work/b", { root });
    const png = Buffer.alloc(20_000, 7).toString("base64");
    m.appendMessage({ role: "user", content: [{ type: "image", data: png, mimeType: "image/png" }], timestamp: 1 } as never);
    await m.close();
    const blobs = join(root, "blobs");
    const [blob] = readdirSync(blobs).filter((n) => /^[0-9a-f]{64}$/.test(n));
    expect(blob).toBeDefined();
    const life = Lifecycle.open({ root });
    await life.rm(m.sessionId);
    const gc1 = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: blobs, graceMs: 0 });
    expect(gc1.deleted).toEqual([]);
    expect(existsSync(join(blobs, blob!))).toBe(true);
    const seen: string[] = [];
    const purger = Lifecycle.open({ root, onBeforePurge: (info) => void seen.push(`${info.store}:${info.sessionId}`) });
    const purged = await purger.purge({ refs: [m.sessionId] });
    expect(purged.purged.map((e) => e.sessionId)).toEqual([m.sessionId]);
    expect(seen).toEqual([`file:${m.sessionId}`]);
    const gc2 = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: blobs, graceMs: 0 });
    expect(gc2.deleted).toEqual([blob]);
  });

  it("purge without ids deletes only entries past the retention period", async () => {
    const root = tempDir();
    let clock = new Date("2026-01-01T00:00:00Z");
    const now = () => clock;
    const a = await session(root, "/w", "old");
    await a.close();
    const b = await session(root, "/w", "new");
    await b.close();
    writeFileSync(join(root, "config.json"), JSON.stringify({ trash: { retainDays: 10 } }));
    const life = Lifecycle.open({ root, now });
    await life.rm(a.sessionId);
    clock = new Date("2026-01-08T00:00:00Z");
    await life.rm(b.sessionId);
    clock = new Date("2026-01-11T00:00:01Z");
    expect((await life.purge({ dryRun: true })).purged.map((e) => e.sessionId)).toEqual([a.sessionId]);
    expect((await life.listTrash()).length).toBe(2);
    const report = await life.purge();
    expect(report.purged.map((e) => e.sessionId)).toEqual([a.sessionId]);
    expect((await life.listTrash()).map((e) => e.sessionId)).toEqual([b.sessionId]);
    // idempotent: nothing more is due
    expect((await life.purge()).purged).toEqual([]);
  });

  it("archived sessions leave list, listAll and continueRecent, and stay openable by path", async () => {
    const root = tempDir();
    const old = await session(root, "/w", "first", new Date("2026-01-01T00:00:00Z"));
    await old.close();
    const recent = await session(root, "/w", "second", new Date("2026-01-02T00:00:00Z"));
    await recent.close();
    const life = Lifecycle.open({ root });
    await life.archive(recent.sessionId);
    expect((await SessionManager.list("/w", { root })).map((s) => s.id)).toEqual([old.sessionId]);
    expect((await SessionManager.listAll({ root })).map((s) => s.id)).toEqual([old.sessionId]);
    const all = await SessionManager.listAll({ root, includeArchived: true });
    expect(all.map((s) => [s.id, s.archived === true])).toEqual([
      [recent.sessionId, true],
      [old.sessionId, false],
    ]);
    const resumed = await SessionManager.continueRecent("/w", { root });
    expect(resumed.sessionId).toBe(old.sessionId);
    await resumed.close();
    const opened = await SessionManager.open(recent.location!, { root, readOnly: true });
    expect(opened.sessionId).toBe(recent.sessionId);
    await life.unarchive(recent.sessionId);
    expect((await SessionManager.list("/w", { root })).map((s) => s.id)).toEqual([recent.sessionId, old.sessionId]);
    // the state is the store's own file, not an index
    expect(
      readFileSync(join(root, "lifecycle.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).op),
    ).toEqual(["archive", "unarchive"]);
  });

  it("pin protects from prune and rm; prune --dry-run lists exactly what goes and touches nothing", async () => {
    const root = tempDir();
    const day = (d: number) => new Date(Date.UTC(2026, 0, d));
    const ids: string[] = [];
    for (const d of [1, 2, 3, 4]) {
      const m = await session(root, "/p", `s${d}`, day(d));
      await m.close();
      ids.push(m.sessionId);
    }
    const life = Lifecycle.open({ root, now: () => day(20) });
    await life.pin(ids[0]!);
    await expectCode(life.rm(ids[0]!), "SESSION_PINNED");
    const before = snapshot(join(root, "sessions"));
    const dry = await life.prune({ olderThanMs: 10 * 86_400_000, keepLast: 1 }, { dryRun: true });
    expect(dry.remove.map((r) => r.session.id)).toEqual([ids[1], ids[2]]);
    expect(dry.skipped.map((s) => [s.session.id, s.reason])).toEqual([[ids[0], "pinned"]]);
    expect(dry.bytes).toBe(dry.remove.reduce((n, r) => n + r.session.bytes, 0));
    expect(snapshot(join(root, "sessions"))).toEqual(before);
    const real = await life.prune({ olderThanMs: 10 * 86_400_000, keepLast: 1 });
    expect(real.trashed.map((e) => e.sessionId)).toEqual([ids[1], ids[2]]);
    expect(real.bytes).toBe(dry.bytes);
    const left = (await SessionManager.listAll({ root })).map((s) => s.id).sort();
    expect(left).toEqual([ids[0], ids[3]].sort());
  });

  it("prune --max-total removes the oldest unpinned sessions until the total fits", async () => {
    const root = tempDir();
    const day = (d: number) => new Date(Date.UTC(2026, 0, d));
    const ids: string[] = [];
    for (const d of [1, 2, 3]) {
      const m = await session(root, `/m${d}`, "x".repeat(1000), day(d));
      await m.close();
      ids.push(m.sessionId);
    }
    const life = Lifecycle.open({ root, now: () => day(5) });
    const sizes = await Promise.all((await SessionManager.listAll({ root })).map((s) => life.driver.bytesOf(s)));
    const total = sizes.reduce((a, b) => a + b, 0);
    const plan = await life.prune({ maxTotalBytes: total - 1 }, { dryRun: true });
    expect(plan.remove.map((r) => [r.session.id, r.reason])).toEqual([[ids[0], "max-total"]]);
    expect(plan.totalAfter).toBeLessThan(total);
  });

  it("a session with a live writer is never pruned or removed", async () => {
    const root = tempDir();
    const m = await session(root, "/l", "live", new Date("2026-01-01T00:00:00Z"));
    const life = Lifecycle.open({ root, now: () => new Date("2026-03-01T00:00:00Z") });
    const dry = await life.prune({ olderThanMs: 86_400_000 }, { dryRun: true });
    expect(dry.remove).toEqual([]);
    expect(dry.skipped.map((s) => s.reason)).toEqual(["live-writer"]);
    await expectCode(life.rm(m.sessionId), "SESSION_LOCKED");
    m.appendMessage({ role: "user", content: "still here", timestamp: 3 } as never);
    await m.close();
    expect(existsSync(m.location!)).toBe(true);
  });

  it("restore refuses when something took the session's place, moving nothing", async () => {
    const root = tempDir();
    const m = await session(root, "/r", "x");
    await m.close();
    const life = Lifecycle.open({ root });
    await life.rm(m.sessionId);
    writeFileSync(m.location!, "someone else\n");
    await expectCode(life.restore(m.sessionId), "MOVE_FAILED");
    expect(readFileSync(m.location!, "utf8")).toBe("someone else\n");
    expect((await life.listTrash()).length).toBe(1);
  });
});

describe("the file trash refuses what it did not write", () => {
  it("a trash.json naming parts outside its entry is left alone (reported), never restored", async () => {
    const root = tempDir();
    const m = await session(root, "/h", "x");
    await m.close();
    const warnings: string[] = [];
    const life = Lifecycle.open({ root, onWarning: (w) => void warnings.push(w.code) });
    const entry = await life.rm(m.sessionId);
    const journalPath = join(trashDirOf(root), entry.trashId, "trash.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    writeFileSync(journalPath, JSON.stringify({ ...journal, parts: ["../../escape", ...journal.parts] }));
    expect(await life.listTrash()).toEqual([]);
    expect(warnings).toEqual(["MOVE_FAILED"]);
    await expectCode(life.restore(m.sessionId), "SESSION_NOT_FOUND");
    expect(existsSync(join(trashDirOf(root), entry.trashId, basename(m.location!)))).toBe(true);
  });
});
