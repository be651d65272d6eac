import { expect, it } from "vitest";
import { Lifecycle, SessionManager, type SessionManagerOptions } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { describeBackends } from "./backends.ts";

const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const refOf = (m: SessionManager) => m.sessionFile ?? m.sessionId;

/** A closed session of `cwd` whose clock says `day` (January 2026). */
async function made(options: SessionManagerOptions, cwd: string, day: number, text = `day ${day}`): Promise<SessionManager> {
  const m = await SessionManager.create(cwd, { ...options, now: () => new Date(Date.UTC(2026, 0, day)) });
  m.appendMessage(user(text));
  await m.close();
  return m;
}

/** What a reader sees of a session: its header and entries (read-only open). */
async function contentOf(options: SessionManagerOptions, ref: string): Promise<string> {
  const m = await SessionManager.open(ref, { ...options, readOnly: true, rehydrate: "lazy" });
  try {
    return JSON.stringify([m.header, m.getEntries(), m.artifacts?.list().map((a) => [a.id, m.artifacts!.getText(a.id)])]);
  } finally {
    await m.close();
  }
}

describeBackends("store lifecycle conformance (pin, archive, trash, prune)", { needs: ["lifecycle"] }, (backend) => {
  it("archived sessions leave list, listAll and continueRecent; includeArchived shows them marked; still openable", async () => {
    const options = await backend.options();
    const old = await made(options, "/w/arch", 1);
    const recent = await made(options, "/w/arch", 2);
    const life = Lifecycle.open(options);
    await life.archive(refOf(recent));
    await life.pin(refOf(old));
    expect((await SessionManager.list("/w/arch", options)).map((s) => [s.id, s.pinned])).toEqual([[old.sessionId, true]]);
    expect((await SessionManager.listAll(options)).map((s) => s.id)).toEqual([old.sessionId]);
    const shown = await SessionManager.listAll({ ...options, includeArchived: true });
    expect(shown.map((s) => [s.id, s.archived === true])).toEqual([
      [recent.sessionId, true],
      [old.sessionId, false],
    ]);
    const resumed = await SessionManager.continueRecent("/w/arch", options);
    expect(resumed.sessionId).toBe(old.sessionId);
    await resumed.close();
    expect(await contentOf(options, refOf(recent))).toContain("day 2");
    // idempotent, and undone by unarchive
    await life.archive(refOf(recent));
    await life.unarchive(refOf(recent));
    expect((await SessionManager.list("/w/arch", options)).map((s) => s.id)).toEqual([recent.sessionId, old.sessionId]);
    expect([...(await life.flags()).entries()].map(([id, f]) => [id, f.pinned, f.archived])).toEqual([[old.sessionId, true, false]]);
  });

  it("rm → restore gives back the same session (entries and artifacts); the trash is not listed", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/w/rm", options);
    m.appendMessage(user("keep me"));
    m.artifacts!.save("artifact text\n", { toolType: "bash" });
    await m.close();
    const before = await contentOf(options, refOf(m));
    const life = Lifecycle.open(options);
    const entry = await life.rm(refOf(m));
    expect(entry.sessionId).toBe(m.sessionId);
    expect(entry.bytes).toBeGreaterThan(0);
    expect(await SessionManager.listAll({ ...options, includeArchived: true })).toEqual([]);
    expect((await life.listTrash()).map((e) => e.sessionId)).toEqual([m.sessionId]);
    await expectCode(life.rm(m.sessionId), "SESSION_NOT_FOUND");
    const info = await life.restore(m.sessionId);
    expect(info.id).toBe(m.sessionId);
    expect(await contentOf(options, refOf(m))).toBe(before);
    expect(await life.listTrash()).toEqual([]);
    // writable again after the restore
    const again = await SessionManager.open(refOf(m), options);
    again.appendMessage(user("after restore"));
    await again.close();
  });

  it("rm refuses a pinned session and one with a live writer", async () => {
    const options = await backend.options();
    const pinned = await made(options, "/w/refuse", 1);
    const life = Lifecycle.open(options);
    await life.pin(refOf(pinned));
    await expectCode(life.rm(refOf(pinned)), "SESSION_PINNED");
    const live = await SessionManager.create("/w/refuse", options);
    live.appendMessage(user("writing"));
    await live.flush();
    await expectCode(life.rm(refOf(live)), "SESSION_LOCKED");
    const plan = await Lifecycle.open({ ...options, now: () => new Date(Date.now() + 400 * 86_400_000) }).prune(
      { olderThanMs: 86_400_000 },
      { dryRun: true },
    );
    expect(plan.remove).toEqual([]);
    expect(plan.skipped.map((s) => [s.session.id, s.reason]).sort()).toEqual(
      [
        [pinned.sessionId, "pinned"],
        [live.sessionId, "live-writer"],
      ].sort(),
    );
    live.appendMessage(user("still mine"));
    await live.close();
    expect(await contentOf(options, refOf(live))).toContain("still mine");
  });

  it("a trashed session's blobs survive gc until purge; purge calls onBeforePurge and deletes it for good", async () => {
    const options = await backend.options();
    const m = await SessionManager.create("/w/purge", options);
    m.appendMessage({
      role: "user",
      content: [{ type: "image", data: makePng(64, 64).toString("base64"), mimeType: "image/png" }],
      timestamp: 1,
    });
    await m.close();
    const seen: string[] = [];
    const life = Lifecycle.open({ ...options, onBeforePurge: (info) => void seen.push(`${info.store} ${info.sessionId}`) });
    await life.rm(refOf(m));
    expect((await SessionManager.gc({ ...options, graceMs: 0 })).deleted).toEqual([]);
    const dry = await life.purge({ all: true, dryRun: true });
    expect(dry.purged.map((e) => e.sessionId)).toEqual([m.sessionId]);
    expect(seen).toEqual([]);
    const report = await life.purge({ all: true });
    expect(report.purged.map((e) => e.sessionId)).toEqual([m.sessionId]);
    expect(seen).toEqual([`${(options.store as { kind?: string } | undefined)?.kind ?? "file"} ${m.sessionId}`]);
    expect(await life.listTrash()).toEqual([]);
    await expectCode(SessionManager.resolve(m.sessionId, "/w/purge", options), "SESSION_NOT_FOUND");
    expect((await SessionManager.gc({ ...options, graceMs: 0 })).deleted).toHaveLength(1);
    // nothing left to purge: idempotent
    expect((await life.purge({ all: true })).purged).toEqual([]);
  });

  it("prune --dry-run names exactly what the real run moves, keep-last per cwd and pins respected", async () => {
    const options = await backend.options();
    const a = [await made(options, "/w/p1", 1), await made(options, "/w/p1", 2), await made(options, "/w/p1", 3)];
    const b = [await made(options, "/w/p2", 1), await made(options, "/w/p2", 2)];
    // a year on, every session is older than a week (a database stamps its own times)
    const life = Lifecycle.open({ ...options, now: () => new Date(Date.now() + 365 * 86_400_000) });
    await life.pin(refOf(a[0]!));
    const policy = { olderThanMs: 7 * 86_400_000, keepLast: 1 };
    const dry = await life.prune(policy, { dryRun: true });
    const expected = [a[1]!.sessionId, b[0]!.sessionId].sort();
    expect(dry.remove.map((r) => r.session.id).sort()).toEqual(expected);
    expect(dry.skipped.map((s) => s.session.id)).toEqual([a[0]!.sessionId]);
    expect((await SessionManager.listAll(options)).length).toBe(5);
    const real = await life.prune(policy);
    expect(real.trashed.map((e) => e.sessionId).sort()).toEqual(expected);
    expect(real.bytes).toBe(dry.bytes);
    expect((await SessionManager.listAll(options)).map((s) => s.id).sort()).toEqual(
      [a[0]!.sessionId, a[2]!.sessionId, b[1]!.sessionId].sort(),
    );
  });

  it.skipIf(backend.cliArgs === null)("the CLI works on the store: rm, trash, restore", async () => {
    const options = await backend.options();
    const m = await made(options, "/w/cli", 1);
    const args = backend.cliArgs!(options);
    const rm = await cli(["rm", m.sessionId, ...args, "--json"]);
    expect(rm.records.map((r) => [r.type, r.id])).toEqual([["trashed", m.sessionId]]);
    expect((await cli(["ls", "--all", ...args, "--json"])).records).toEqual([]);
    expect((await cli(["trash", ...args, "--json"])).records.map((r) => r.id)).toEqual([m.sessionId]);
    expect((await cli(["restore", m.sessionId, ...args, "--json"])).records.map((r) => r.id)).toEqual([m.sessionId]);
    expect((await cli(["ls", "--all", ...args, "--json"])).records.map((r) => r.id)).toEqual([m.sessionId]);
  });
});
