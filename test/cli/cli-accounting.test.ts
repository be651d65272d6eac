import { constants, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { totalOf } from "../../src/accounting/line-kinds.ts";
import { recordDeletedUsage, storeUsage } from "../../src/maintenance/store-accounting.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { closeUrlStores } from "../../src/storage/store-url.ts";
import { cli } from "../support/cli.ts";
import { injectFault } from "../support/fault.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { makePng } from "../support/png.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const HOUR = 3600e3;

/** An assistant message with usage, `hoursAgo` before now. */
function assistant(cost: number, hoursAgo: number, model = "claude-x") {
  return {
    role: "assistant",
    content: [{ type: "text", text: "done" }],
    provider: "anthropic",
    model,
    usage: {
      input: 10,
      output: 20,
      cacheRead: 30,
      cacheWrite: 40,
      totalTokens: 100,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
    },
    timestamp: Date.now() - hoursAgo * HOUR,
  };
}

/**
 * Two sessions through the library (file tree or database): both hold the same image (one shared
 * blob), the first also its own; usage 2 days and 40 days old.
 */
async function twoSessions(options: { root?: string; store?: string }) {
  const shared = makePng(30, 30, 1).toString("base64");
  const own = makePng(40, 40, 2).toString("base64");
  const now = Date.now();
  const a = await SessionManager.create("/w/a", { ...options, now: () => new Date(now - 2 * 24 * HOUR) });
  a.appendMessage({
    role: "user",
    content: [
      { type: "image", data: shared, mimeType: "image/png" },
      { type: "image", data: own, mimeType: "image/png" },
    ],
  });
  a.appendMessage(assistant(0.5, 48) as never);
  a.artifacts!.save("o".repeat(1234), { toolType: "bash" });
  await a.close();
  const b = await SessionManager.create("/w/b", { ...options, now: () => new Date(now - 40 * 24 * HOUR) });
  b.appendMessage({ role: "user", content: [{ type: "image", data: shared, mimeType: "image/png" }] });
  b.appendMessage(assistant(2, 40 * 24, "gpt-y") as never);
  await b.close();
  return { a, b, sharedBytes: makePng(30, 30, 1).length, ownBytes: makePng(40, 40, 2).length };
}

describe("transcript-store du / usage on a file store", () => {
  it("du --json: one record per session (bytes by kind adding up to the file), then the totals", async () => {
    const root = tempDir();
    const { a, b, sharedBytes, ownBytes } = await twoSessions({ root });
    const run = await cli(["du", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    const rows = run.records.filter((r) => r.type === "session");
    expect(rows.map((r) => r.id)).toEqual([a.sessionId, b.sessionId]);
    expect(rows[0]).toMatchObject({
      sessionBytes: statSync(a.sessionFile!).size,
      exclusiveBlobBytes: ownBytes,
      sharedBlobBytes: sharedBytes,
    });
    expect(rows[1]).toMatchObject({ sessionBytes: statSync(b.sessionFile!).size, exclusiveBlobBytes: 0, sharedBlobBytes: sharedBytes });
    for (const r of rows) expect(totalOf(r.kinds)).toBe(r.sessionBytes);
    const artifactFiles = readdirSync(a.artifactsDir!, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    const artifactBytes = artifactFiles.reduce((n, e) => n + statSync(join(e.parentPath, e.name)).size, 0);
    expect(artifactBytes).toBeGreaterThanOrEqual(1234);
    expect(rows.map((r) => r.artifacts)).toEqual([artifactBytes, 0]);
    expect(rows[0]!.total).toBe(rows[0]!.sessionBytes + ownBytes + artifactBytes);
    expect(run.records.at(-1)).toMatchObject({
      type: "totals",
      sessions: 2,
      referencedBlobs: 2,
      referencedBlobBytes: sharedBytes + ownBytes,
    });
    const cwd = await cli(["du", "--root", root, "--by", "cwd", "--top", "1", "--json"]);
    expect(cwd.records.filter((r) => r.type === "cwd").map((r) => [r.cwd, r.exclusiveBlobBytes])).toEqual([["/w/a", ownBytes]]);
  });

  it("du prints human sizes in a table; bad --by and --top are usage errors (exit 2)", async () => {
    const root = tempDir();
    const { a } = await twoSessions({ root });
    const run = await cli(["du", "--root", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^total\s+text\s+tools\s+thinking\s+images\s+other\s+blobs\s+shared\s+artifacts\s+q\+bak\s+session\n/);
    expect(run.stdout).toContain(a.sessionId);
    expect(run.stdout).toMatch(/\d+(\.\d)? (B|KB)/);
    expect(run.stdout).toContain("2 session(s)");
    expect((await cli(["du", "--root", root, "--by", "model"])).code).toBe(2);
    expect((await cli(["du", "--root", root, "--top", "0"])).code).toBe(2);
  });

  it("rm, restore and purge keep a session's calls counted exactly once (the CLI records them in the ledger)", async () => {
    const root = tempDir();
    const { b } = await twoSessions({ root });
    const total = async () => (await cli(["usage", "--root", root, "--json"])).records.at(-1);
    expect(await total()).toMatchObject({ type: "total", calls: 2, deletedCalls: 0, cost: { total: 2.5 } });
    expect((await cli(["rm", b.sessionId, "--root", root])).code).toBe(0);
    expect(await total()).toMatchObject({ type: "total", calls: 2, deletedCalls: 1, cost: { total: 2.5 } });
    expect((await cli(["restore", b.sessionId, "--root", root])).code).toBe(0);
    expect(await total()).toMatchObject({ type: "total", calls: 2, cost: { total: 2.5 } });
    expect((await cli(["rm", b.sessionId, "--root", root])).code).toBe(0);
    expect((await cli(["purge", "--all", "--root", root])).code).toBe(0);
    expect(readdirSync(join(root, "trash"))).toEqual([]);
    expect(await total()).toMatchObject({ type: "total", calls: 2, deletedCalls: 1, cost: { total: 2.5 } });
  });

  it("an archived session still counts in usage and du; prune then restore --last-prune leaves the totals as they were", async () => {
    const root = tempDir();
    const { a, b } = await twoSessions({ root });
    expect((await cli(["archive", b.sessionId, "--root", root])).code).toBe(0);
    const total = async () => (await cli(["usage", "--root", root, "--json"])).records.at(-1);
    expect(await total()).toMatchObject({ type: "total", calls: 2, deletedCalls: 0, cost: { total: 2.5 } });
    const du = await cli(["du", "--root", root, "--json"]);
    expect(du.records.filter((r) => r.type === "session").map((r) => r.id)).toEqual([a.sessionId, b.sessionId]);
    expect((await cli(["stats", "--root", root])).stdout).toMatch(/^sessions: 2 /m);
    // prune trashes the archived, 40-day-old one; the undo brings it back: counted once, not deleted
    expect((await cli(["prune", "--older-than", "30d", "--root", root])).code).toBe(0);
    expect(await total()).toMatchObject({ type: "total", calls: 2, deletedCalls: 1, cost: { total: 2.5 } });
    expect((await cli(["restore", "--last-prune", "--root", root])).code).toBe(0);
    expect(await total()).toMatchObject({ type: "total", calls: 2, deletedCalls: 0, cost: { total: 2.5 } });
  });

  it("usage --since 30d leaves out older calls; --by model; a deleted session's rows stay, flagged", async () => {
    const root = tempDir();
    const { a, b } = await twoSessions({ root });
    const all = await cli(["usage", "--root", root, "--json"]);
    expect(all.records.at(-1)).toMatchObject({ type: "total", calls: 2, deletedCalls: 0, cost: { total: 2.5 } });
    const recent = await cli(["usage", "--root", root, "--since", "30d", "--json"]);
    expect(recent.records.filter((r) => r.type === "usage").map((r) => [r.key, r.calls])).toEqual([[a.sessionId, 1]]);
    expect(recent.records.at(-1)).toMatchObject({ type: "total", calls: 1, cost: { total: 0.5 } });
    const model = await cli(["usage", "--root", root, "--by", "model", "--until", "30d", "--json"]);
    expect(model.records.filter((r) => r.type === "usage").map((r) => r.key)).toEqual(["anthropic/gpt-y"]);
    await recordDeletedUsage(b.sessionFile!, { root });
    await recordDeletedUsage(b.sessionFile!, { root });
    rmSync(b.sessionFile!);
    const after = await cli(["usage", "--root", root, "--json"]);
    expect(after.records.at(-1)).toMatchObject({ type: "total", calls: 2, deletedCalls: 1, cost: { total: 2.5 } });
    const text = await cli(["usage", "--root", root]);
    expect(text.stdout).toContain("1 (1 deleted)");
    expect(text.stdout).toContain("$2.00\n");
    expect((await cli(["usage", "--root", root, "--since", "yesterday"])).code).toBe(2);
  });

  it("usage reports a malformed usage value on stderr (--json: a problem record), counts it 0 and exits 0", async () => {
    const root = tempDir();
    const m = await SessionManager.create("/w/c", { root });
    m.appendMessage({ role: "assistant", content: [], usage: { input: -5, output: 7, cost: { total: 0.125 } } } as never);
    await m.close();
    const text = await cli(["usage", "--root", root]);
    expect(text.code).toBe(0);
    expect(text.stderr).toMatch(
      new RegExp(
        `^warning: session ${m.sessionId} entry [0-9a-f]{8} \\(line 2\\): ` +
          "message\\.usage\\.input not a non-negative number: -5; counted as 0\\n$",
      ),
    );
    const json = await cli(["usage", "--root", root, "--json"]);
    expect(json.code).toBe(0);
    expect(json.records.find((r) => r.type === "total")).toMatchObject({
      calls: 1,
      tokens: { input: 0, output: 7 },
      cost: { total: 0.125 },
    });
    expect(json.records.filter((r) => r.type === "problem")).toEqual([
      expect.objectContaining({ sessionId: m.sessionId, field: "message.usage.input" }),
    ]);
  });

  it("a session file that cannot be read is a warning naming it, the rest still counted, exit 1", async () => {
    const root = tempDir();
    const { a, b } = await twoSessions({ root });
    // Fails the accounting read of `a` only (listing opens it otherwise).
    const restore = injectFault("openSync", (_, [path, flags]) =>
      path === a.sessionFile && typeof flags === "number" && (flags & constants.O_NOFOLLOW) !== 0 ? "EIO" : undefined,
    );
    try {
      const du = await cli(["du", "--root", root, "--json"]);
      expect(du.code).toBe(1);
      expect(du.stderr).toContain(`warning: Cannot read ${a.sessionFile}: EIO`);
      expect(du.records.filter((r) => r.type === "session").map((r) => r.id)).toEqual([b.sessionId]);
      expect(du.records.at(-1)).toMatchObject({ type: "totals", sessions: 1, incomplete: true });
      const usage = await cli(["usage", "--root", root, "--json"]);
      expect(usage.code).toBe(1);
      expect(usage.records.find((r) => r.type === "total")).toMatchObject({ calls: 1, cost: { total: 2 } });
      await expect(storeUsage({ root })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED", path: a.sessionFile });
    } finally {
      restore();
    }
  });

  it("stats gains the totals by kind", async () => {
    const root = tempDir();
    const { a, b } = await twoSessions({ root });
    const run = await cli(["stats", "--root", root, "--json"]);
    const space = run.records[0]!.space;
    expect(totalOf(space.kinds)).toBe(statSync(a.sessionFile!).size + statSync(b.sessionFile!).size);
    expect(space).toMatchObject({ sessions: 2, referencedBlobs: 2, unreferencedBlobs: 0 });
    expect((await cli(["stats", "--root", root])).stdout).toMatch(/by kind: {2}text \d/);
  });
});

describe.skipIf(!pgCluster())("transcript-store du / usage on a PostgreSQL store", () => {
  it("du counts each session's header and rows to the byte, blobs exclusive vs shared from the rows' refs", async () => {
    const url = await freshDatabase();
    const { a, b, sharedBytes, ownBytes } = await twoSessions({ store: url });
    await closeUrlStores();
    const run = await cli(["du", "--store", url, "--json"]);
    expect(run.code).toBe(0);
    const { rows: db } = await rawPool(url).query("SELECT id, octet_length(header) + 1 + body_bytes AS bytes FROM sessions");
    const bytes = new Map(db.map((r) => [r.id, Number(r.bytes)]));
    const rows = run.records.filter((r) => r.type === "session");
    expect(rows.map((r) => r.id)).toEqual([a.sessionId, b.sessionId]);
    for (const r of rows) {
      expect(r.sessionBytes).toBe(bytes.get(r.id));
      expect(totalOf(r.kinds)).toBe(r.sessionBytes);
    }
    expect(rows[0]).toMatchObject({ exclusiveBlobBytes: ownBytes, sharedBlobBytes: sharedBytes, path: null });
    const { rows: art } = await rawPool(url).query("SELECT session_id, sum(size)::int AS bytes FROM artifacts GROUP BY 1");
    expect(art).toEqual([{ session_id: a.sessionId, bytes: expect.any(Number) }]);
    expect(art[0].bytes).toBeGreaterThanOrEqual(1234);
    expect(rows.map((r) => r.artifacts)).toEqual([art[0].bytes, 0]);
    expect(rows[1]).toMatchObject({ exclusiveBlobBytes: 0, sharedBlobBytes: sharedBytes });
    const stats = await cli(["stats", "--store", url, "--json"]);
    expect(stats.records[0]!.space).toMatchObject({ sessions: 2, referencedBlobBytes: sharedBytes + ownBytes });
  });

  it("usage: rows of a deleted session stay in usage_ledger, flagged; recording twice inserts nothing twice", async () => {
    const url = await freshDatabase();
    const { a, b } = await twoSessions({ store: url });
    try {
      const first = await recordDeletedUsage(b.sessionId, { store: url });
      expect(first).toMatchObject({ sessionId: b.sessionId, rows: 1, recorded: 1 });
      expect(await recordDeletedUsage(b.sessionId, { store: url })).toMatchObject({ rows: 1, recorded: 0 });
      await expect(recordDeletedUsage("no-such-session", { store: url })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    } finally {
      await closeUrlStores();
    }
    const pool = rawPool(url);
    expect((await pool.query("SELECT session_id, row->'cost'->>'total' AS cost FROM usage_ledger")).rows).toEqual([
      { session_id: b.sessionId, cost: "2" },
    ]);
    const live = await cli(["usage", "--store", url, "--json"]);
    expect(live.records.at(-1)).toMatchObject({ calls: 2, deletedCalls: 0, cost: { total: 2.5 } });
    await pool.query("DELETE FROM sessions WHERE id = $1", [b.sessionId]);
    const after = await cli(["usage", "--store", url, "--by", "session", "--json"]);
    expect(after.records.filter((r) => r.type === "usage").map((r) => [r.key, r.calls, r.deletedCalls])).toEqual([
      [b.sessionId, 1, 1],
      [a.sessionId, 1, 0],
    ]);
    const recent = await cli(["usage", "--store", url, "--since", "30d", "--json"]);
    expect(recent.records.at(-1)).toMatchObject({ calls: 1, deletedCalls: 0, cost: { total: 0.5 } });
  });
});
