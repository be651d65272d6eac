import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { totalOf } from "../../src/accounting/line-kinds.ts";
import { recordDeletedUsage, storeSpace, storeUsage } from "../../src/maintenance/store-accounting.ts";
import { cwdBucket, sessionFileName } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const ID = (n: number) => `aaaaaaaa-0000-4000-8000-00000000000${n}`;

/** A blob of `size` bytes in the store's blob directory; its hash. */
function blob(root: string, seed: string, size: number): string {
  const bytes = Buffer.alloc(size, seed);
  const hash = sha(bytes);
  mkdirSync(join(root, "blobs"), { recursive: true });
  writeFileSync(join(root, "blobs", hash), bytes);
  return hash;
}

/** A session file written by hand: a v3 header, then `entries` chained. Returns its path. */
function session(root: string, n: number, cwd: string, entries: Record<string, unknown>[]): string {
  const dir = join(root, "sessions", cwdBucket(cwd));
  mkdirSync(dir, { recursive: true });
  const path = join(dir, sessionFileName(new Date(Date.UTC(2025, 5, n)), ID(n)));
  const lines = [{ type: "session", version: 3, id: ID(n), timestamp: new Date(Date.UTC(2025, 5, n)).toISOString(), cwd }];
  let parentId: string | null = null;
  entries.forEach((e, i) => {
    const id = `${n}000000${i}`.slice(0, 8);
    lines.push({ id, parentId, ...e } as never);
    parentId = id;
  });
  writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  return path;
}

const refImage = (hash: string) => ({ type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" });
const user = (content: unknown[], timestamp: string) => ({ type: "message", timestamp, message: { role: "user", content } });
const assistant = (costTotal: number, timestamp: string, model = "claude-x") => ({
  type: "message",
  timestamp,
  message: {
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    provider: "anthropic",
    model,
    usage: {
      input: 100,
      output: 10,
      cacheRead: 1000,
      cacheWrite: 5,
      totalTokens: 1115,
      cost: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, total: costTotal },
    },
  },
});

/**
 * Three sessions: A (cwd /w/a) references X and Y, its backup references Z, it has artifacts and a
 * quarantine file; B and C (cwd /w/b) reference Y and V, and V, respectively; W is referenced by none.
 */
function store() {
  const root = tempDir();
  const X = blob(root, "x", 1000);
  const Y = blob(root, "y", 3000);
  const Z = blob(root, "z", 500);
  const V = blob(root, "v", 800);
  const W = blob(root, "w", 700);
  const a = session(root, 1, "/w/a", [
    user([refImage(X), refImage(Y)], "2025-06-01T10:00:00.000Z"),
    assistant(0.5, "2025-06-01T10:00:01.000Z"),
  ]);
  mkdirSync(a.slice(0, -".jsonl".length));
  writeFileSync(join(a.slice(0, -".jsonl".length), "1.bash.log"), Buffer.alloc(100, "l"));
  writeFileSync(`${a.slice(0, -".jsonl".length)}.quarantine.jsonl`, `${JSON.stringify({ type: "quarantine", text: "x" })}\n`);
  writeFileSync(`${a}.bak`, `${JSON.stringify({ ref: `blob:sha256:${Z}` })}\n`);
  const b = session(root, 2, "/w/b", [
    user([refImage(Y), refImage(V)], "2025-06-10T10:00:00.000Z"),
    assistant(0.25, "2025-06-10T10:00:01.000Z", "gpt-y"),
  ]);
  const c = session(root, 3, "/w/b", [user([refImage(V)], "2025-05-01T10:00:00.000Z"), assistant(1, "2025-05-01T10:00:01.000Z")]);
  return { root, a, b, c, X, Y, Z, V, W };
}

const size = (p: string) => statSync(p).size;

describe("du on a file store", () => {
  it("accounts every byte by kind and splits blobs into exclusive and shared, by session", async () => {
    const s = store();
    const { rows, totals } = await storeSpace({ root: s.root, by: "session" });
    const byId = new Map(rows.map((r) => [r.id, r]));
    const A = byId.get(ID(1))!;
    const B = byId.get(ID(2))!;
    const C = byId.get(ID(3))!;
    for (const [row, path] of [
      [A, s.a],
      [B, s.b],
      [C, s.c],
    ] as const) {
      expect(row.sessionBytes).toBe(size(path));
      expect(totalOf(row.kinds)).toBe(size(path));
    }
    const quarantine = size(`${s.a.slice(0, -6)}.quarantine.jsonl`);
    const backups = size(`${s.a}.bak`);
    expect(A).toMatchObject({ exclusiveBlobs: 2, exclusiveBlobBytes: 1000 + 500, sharedBlobs: 1, sharedBlobBytes: 3000 });
    expect(A).toMatchObject({ artifacts: 100, quarantine, backups, total: size(s.a) + 1500 + 100 + quarantine + backups });
    expect(B).toMatchObject({ exclusiveBlobBytes: 0, sharedBlobBytes: 3000 + 800, total: size(s.b) });
    expect(C).toMatchObject({ exclusiveBlobBytes: 0, sharedBlobBytes: 800, total: size(s.c) });
    expect(rows.map((r) => r.id)).toEqual([ID(1), ID(2), ID(3)].sort((p, q) => byId.get(q)!.total - byId.get(p)!.total));
    expect(totals).toMatchObject({
      sessions: 3,
      sessionBytes: size(s.a) + size(s.b) + size(s.c),
      referencedBlobs: 4,
      referencedBlobBytes: 1000 + 3000 + 500 + 800,
      unreferencedBlobs: 1,
      unreferencedBlobBytes: 700,
      missingBlobs: 0,
      artifacts: 100,
    });
  });

  it("by cwd: a blob only one cwd's sessions reference is exclusive to that cwd", async () => {
    const s = store();
    const { rows } = await storeSpace({ root: s.root, by: "cwd" });
    expect(rows.map((r) => [r.cwd, r.sessions, r.exclusiveBlobBytes, r.sharedBlobBytes])).toEqual([
      ["/w/a", 1, 1500, 3000],
      ["/w/b", 2, 800, 3000],
    ]);
    expect(rows[1]!.sessionBytes).toBe(size(s.b) + size(s.c));
  });

  it("--top keeps the largest rows; a referenced blob that is absent is counted missing", async () => {
    const s = store();
    rmSync(join(s.root, "blobs", s.X));
    const { rows, totals } = await storeSpace({ root: s.root, top: 1 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: ID(1), missingBlobs: 1, exclusiveBlobBytes: 500 });
    expect(totals.missingBlobs).toBe(1);
  });
});

describe("usage on a file store", () => {
  it("sums tokens and cost by session, model, day and cwd, and filters by time", async () => {
    const s = store();
    const bySession = await storeUsage({ root: s.root, by: "session" });
    expect(bySession.groups.map((g) => [g.key, g.calls, g.cost.total])).toEqual([
      [ID(3), 1, 1],
      [ID(1), 1, 0.5],
      [ID(2), 1, 0.25],
    ]);
    expect(bySession.total).toMatchObject({
      calls: 3,
      sessions: 3,
      cost: { input: 3, output: 6, cacheRead: 9, cacheWrite: 12, total: 1.75 },
    });
    expect(bySession.total.tokens).toEqual({ input: 300, output: 30, cacheRead: 3000, cacheWrite: 15, totalTokens: 3345 });
    const byModel = await storeUsage({ root: s.root, by: "model" });
    expect(byModel.groups.map((g) => [g.key, g.calls, g.cost.total])).toEqual([
      ["anthropic/claude-x", 2, 1.5],
      ["anthropic/gpt-y", 1, 0.25],
    ]);
    const byDay = await storeUsage({ root: s.root, by: "day", since: new Date("2025-05-15T00:00:00Z") });
    expect(byDay.groups.map((g) => [g.key, g.cost.total])).toEqual([
      ["2025-06-01", 0.5],
      ["2025-06-10", 0.25],
    ]);
    const until = await storeUsage({ root: s.root, by: "cwd", until: new Date("2025-06-05T00:00:00Z") });
    expect(until.groups.map((g) => [g.key, g.calls, g.cost.total])).toEqual([
      ["/w/b", 1, 1],
      ["/w/a", 1, 0.5],
    ]);
  });

  it("a call a fork copied (same entry id, time, model and counts) counts once, to the session that made it", async () => {
    const root = tempDir();
    const source = await SessionManager.create("/w/f", { root, now: () => new Date("2025-06-01T00:00:00.000Z") });
    source.appendMessage({ role: "user", content: "go" });
    source.appendMessage(assistant(0.5, "").message as never);
    await source.close();
    const fork = await SessionManager.forkFrom(source.sessionFile!, "/w/f", { root, now: () => new Date("2025-06-02T00:00:00.000Z") });
    fork.appendMessage(assistant(0.25, "").message as never);
    await fork.close();
    const report = await storeUsage({ root, by: "session" });
    expect(report.total).toMatchObject({ calls: 2, sessions: 2, cost: { total: 0.75 } });
    expect(report.groups.map((g) => [g.key, g.calls, g.cost.total])).toEqual([
      [source.sessionId, 1, 0.5],
      [fork.sessionId, 1, 0.25],
    ]);
    expect(report.copies).toBe(1);
    // Deleting the source: its recorded row and the fork's copy are still one call.
    await recordDeletedUsage(source.sessionFile!, { root });
    rmSync(source.sessionFile!);
    expect((await storeUsage({ root })).total).toMatchObject({ calls: 2, deletedCalls: 0, cost: { total: 0.75 } });
  });

  it("a deleted session's rows outlive its file, flagged; recording twice writes nothing twice", async () => {
    const s = store();
    const before = await storeUsage({ root: s.root, by: "session" });
    const first = await recordDeletedUsage(s.a, { root: s.root, now: () => new Date("2026-01-01T00:00:00Z") });
    expect(first).toEqual({ sessionId: ID(1), rows: 1, recorded: 1, problems: [] });
    const ledger = join(s.root, "usage-ledger.jsonl");
    const bytes = readFileSync(ledger);
    expect(
      bytes
        .toString()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ).toMatchObject([
      { type: "usage_row", sessionId: ID(1), key: "10000001", deletedAt: "2026-01-01T00:00:00.000Z", cost: { total: 0.5 } },
    ]);
    // While the file still exists (a purge that failed after recording), the row counts once, as live.
    expect((await storeUsage({ root: s.root })).total).toEqual(before.total);
    expect(await recordDeletedUsage(s.a, { root: s.root })).toMatchObject({ rows: 1, recorded: 0 });
    expect(readFileSync(ledger)).toEqual(bytes);
    rmSync(s.a);
    const after = await storeUsage({ root: s.root, by: "session" });
    expect(after.total).toEqual({ ...before.total, deletedCalls: 1 });
    expect(after.groups.find((g) => g.key === ID(1))).toMatchObject({ calls: 1, deletedCalls: 1, cost: { total: 0.5 } });
  });

  it("a torn ledger line is reported and left in place; the next record starts on its own line", async () => {
    const s = store();
    await recordDeletedUsage(s.a, { root: s.root });
    const ledger = join(s.root, "usage-ledger.jsonl");
    appendFileSync(ledger, '{"type":"usage_row","sessionId":"torn');
    const torn = readFileSync(ledger);
    await recordDeletedUsage(s.b, { root: s.root });
    expect(readFileSync(ledger).subarray(0, torn.length)).toEqual(torn);
    rmSync(s.a);
    rmSync(s.b);
    const report = await storeUsage({ root: s.root });
    expect(report.total).toMatchObject({ calls: 3, deletedCalls: 2 });
    expect(report.ledgerProblems).toEqual([expect.objectContaining({ line: 2, reason: expect.stringMatching(/^invalid JSON/) })]);
  });

  it("recording a session that is not there fails with SESSION_NOT_FOUND and writes nothing", async () => {
    const root = tempDir();
    await expect(recordDeletedUsage(join(root, "nope.jsonl"), { root })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(existsSync(join(root, "usage-ledger.jsonl"))).toBe(false);
  });

  it("reports malformed usage values (session, entry, field) and still sums the rest", async () => {
    const root = tempDir();
    session(root, 4, "/w/c", [
      {
        type: "message",
        timestamp: "2025-06-01T00:00:00.000Z",
        message: { role: "assistant", content: [], usage: { input: "many", output: 2, cost: { total: 0.5 } } },
      },
    ]);
    const report = await storeUsage({ root });
    expect(report.total).toMatchObject({ calls: 1, tokens: { input: 0, output: 2, totalTokens: 2 }, cost: { total: 0.5 } });
    expect(report.problems).toEqual([
      { sessionId: ID(4), key: "40000000", line: 2, field: "message.usage.input", reason: 'not a non-negative number: "many"' },
    ]);
  });
});

const REAL = "/work/shared/real-sessions";

describe.skipIf(!existsSync(REAL))("usage of real pi transcripts", () => {
  it("sums exactly what the assistant messages' usage says, and accounts each file to its byte", async () => {
    const root = tempDir();
    const files = readdirSync(REAL).filter((n) => n.endsWith(".jsonl"));
    expect(files.length).toBeGreaterThan(0);
    let calls = 0;
    let cost = 0;
    let output = 0;
    const sizes = new Map<string, number>();
    for (const name of files) {
      const text = readFileSync(join(REAL, name), "utf8");
      const header = JSON.parse(text.slice(0, text.indexOf("\n")));
      const dir = join(root, "sessions", cwdBucket(header.cwd));
      mkdirSync(dir, { recursive: true });
      copyFileSync(join(REAL, name), join(dir, sessionFileName(new Date(header.timestamp), header.id)));
      sizes.set(header.id, statSync(join(REAL, name)).size);
      for (const line of text.split("\n").filter(Boolean)) {
        const usage = JSON.parse(line).message?.usage;
        if (usage === undefined) continue;
        calls++;
        cost += usage.cost.total;
        output += usage.output;
      }
    }
    const report = await storeUsage({ root, by: "session" });
    expect(report.problems).toEqual([]);
    expect(report.total.calls).toBe(calls);
    expect(report.total.tokens.output).toBe(output);
    expect(report.total.cost.total).toBeCloseTo(cost, 9);
    const { rows } = await storeSpace({ root });
    for (const row of rows) {
      expect(row.sessionBytes).toBe(sizes.get(row.id!));
      expect(row.kinds.toolResults).toBeGreaterThan(0);
      expect(row.kinds.text).toBeGreaterThan(0);
    }
  });
});

if (!existsSync(REAL)) console.warn(`SKIPPED: real transcripts absent (${REAL}): usage of real pi transcripts not tested`);
