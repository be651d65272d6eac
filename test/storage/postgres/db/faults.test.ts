import type { ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PgStore } from "../../../../src/storage/postgres/db/index.ts";
import { onLines, spawnTs } from "../../../support/child.ts";
import { findPgBin, type PgCluster } from "../../../support/pg-cluster.ts";
import { pgCluster, restartCluster, startCluster, stopCluster } from "../../../support/postgres.ts";
import { freshStore, headerLine, rawPool, track } from "../../../support/pg-sessions.ts";

const WRITER = "test/storage/postgres/db/helpers/pg-writer.ts";

interface WriterArgs {
  url: string;
  sessionId: string;
  holder: string;
  batches: number;
  batchSize: number;
  waitLease?: boolean;
  barrier?: number;
  keepLease?: boolean;
}

/** A writer child; `acks` holds each acknowledged last seq, `lines` every stdout line. */
function startWriter(args: WriterArgs, onLine: (line: string) => void = () => {}) {
  const child = spawnTs(WRITER, [JSON.stringify(args)]);
  const acks: number[] = [];
  const lines: string[] = [];
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  onLines(child, (line) => {
    lines.push(line);
    if (line.startsWith("ack ")) acks.push(Number(line.slice(4)));
    onLine(line);
  });
  const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, acks, lines, exit, stderr: () => stderr };
}

/** Every stored entry of a session: seq, id and holder. */
async function stored(url: string, sessionId: string) {
  const { rows } = await rawPool(url).query<{ seq: number; entry_id: string; holder: string }>(
    "SELECT seq::int, entry_id, line::json->>'holder' AS holder FROM entries WHERE session_id = $1 ORDER BY seq",
    [sessionId],
  );
  return rows;
}

function expectContiguous(rows: Array<{ seq: number; entry_id: string }>): void {
  expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
  expect(new Set(rows.map((r) => r.entry_id)).size).toBe(rows.length);
}

const kill = (child: ChildProcess) => child.kill("SIGKILL");

describe.skipIf(!pgCluster())("PostgreSQL faults with real processes", () => {
  it("keeps every acknowledged batch and no partial one when a writer is SIGKILLed mid-batch (lost = 0)", async () => {
    const { store, url } = await freshStore();
    for (const killAfter of [5, 13]) {
      const { session } = await store.createSession(headerLine());
      const writer = startWriter({ url, sessionId: session.id, holder: "k", batches: 1_000_000, batchSize: 64 }, (line) => {
        if (line === `ack ${killAfter * 64}`) kill(writer.child);
      });
      expect(await writer.exit).toBeNull();
      const rows = await stored(url, session.id);
      const acked = Math.max(...writer.acks);
      // the kill follows the ack it waits for; acks the child wrote meanwhile (a loaded machine, one
      // pipe chunk holding several) came first, and each is held to the same rule below
      expect(acked).toBeGreaterThanOrEqual(killAfter * 64);
      expect(acked % 64).toBe(0);
      expectContiguous(rows);
      // every acknowledged row is there; beyond them at most the one batch whose ack was not printed, whole
      expect(rows.length).toBeGreaterThanOrEqual(acked);
      expect(rows.length - acked).toBeLessThanOrEqual(64);
      expect(rows.length % 64).toBe(0);
      expect((await store.getSession(session.id))!.lastSeq).toBe(rows.length);
      // the dead writer's lease expires; the next writer continues after the last stored seq
      await rawPool(url).query("UPDATE sessions SET lease_expires = now() - interval '1 second' WHERE id = $1", [session.id]);
      const next = startWriter({ url, sessionId: session.id, holder: "n", batches: 2, batchSize: 64 });
      expect(await next.exit).toBe(0);
      const after = await stored(url, session.id);
      expectContiguous(after);
      expect(after.length).toBe(rows.length + 128);
    }
  });

  it("gives one lease to one of two processes racing for it; a takeover fences the first writer (no interleaving)", async () => {
    const { store, url } = await freshStore();
    const { session } = await store.createSession(headerLine());
    // both start together (an advisory-lock barrier) and keep the lease they win, so the loser cannot come after a release
    const gate = await rawPool(url).connect();
    await gate.query("SELECT pg_advisory_lock(5150)");
    let ready = 0;
    let allReady: () => void = () => {};
    const readyBoth = new Promise<void>((resolve) => (allReady = resolve));
    const racers = [1, 2].map((n) =>
      startWriter({ url, sessionId: session.id, holder: `r${n}`, batches: 3, batchSize: 8, barrier: 5150, keepLease: true }, (line) => {
        if (line === "ready" && ++ready === 2) allReady();
      }),
    );
    await readyBoth;
    await gate.query("SELECT pg_advisory_unlock(5150)");
    gate.release();
    const codes = await Promise.all(racers.map((r) => r.exit));
    expect(codes.sort()).toEqual([0, 2]);
    expect(racers.flatMap((r) => r.lines.filter((l) => l.startsWith("token ")))).toEqual(["token 1"]);
    expect(racers.flatMap((r) => r.lines.filter((l) => l === "locked"))).toEqual(["locked"]);
    expect((await stored(url, session.id)).length).toBe(24);
    await rawPool(url).query("UPDATE sessions SET lease_expires = now() - interval '1 second' WHERE id = $1", [session.id]);

    // a writer whose lease is taken over (it was paused, or its host cut off) is refused by the database
    let b: ReturnType<typeof startWriter> | null = null;
    const a = startWriter({ url, sessionId: session.id, holder: "a", batches: 1_000_000, batchSize: 8 }, (line) => {
      if (line === "ack 64" && b === null) {
        void rawPool(url)
          .query("UPDATE sessions SET lease_expires = now() - interval '1 second' WHERE id = $1", [session.id])
          .then(() => (b = startWriter({ url, sessionId: session.id, holder: "b", batches: 20, batchSize: 8, waitLease: true })));
      }
    });
    expect(await a.exit).toBe(3);
    expect(a.lines.at(-1)).toBe("fenced");
    for (; b === null; ) await new Promise((resolve) => setImmediate(resolve));
    expect(await (b as ReturnType<typeof startWriter>).exit).toBe(0);
    const rows = await stored(url, session.id);
    expectContiguous(rows);
    const holders = rows.map((r) => r.holder);
    const lastA = holders.lastIndexOf("a");
    const firstB = holders.indexOf("b");
    expect(lastA).toBeLessThan(firstB);
    expect(lastA + 1).toBe(Math.max(...a.acks));
    expect(holders.filter((h) => h === "b").length).toBe(160);
  });

  it("loses nothing acknowledged and duplicates nothing when the server restarts mid-run (writers reconnect)", {
    timeout: 180_000,
  }, async () => {
    const cluster: PgCluster = await startCluster(findPgBin()!);
    try {
      const url = cluster.url;
      const store = track(await PgStore.connect(url));
      const sessions = await Promise.all([1, 2].map(() => store.createSession(headerLine())));
      let restarts: Promise<void> | null = null;
      const writers = sessions.map(({ session }, w) =>
        startWriter({ url, sessionId: session.id, holder: `w${w}`, batches: 600, batchSize: 16 }, (line) => {
          if (w === 0 && line === "ack 160" && restarts === null) {
            restarts = (async () => {
              await restartCluster(cluster, "immediate");
              await restartCluster(cluster, "fast");
            })();
          }
        }),
      );
      const codes = await Promise.all(writers.map((w) => w.exit));
      expect(codes, writers.map((w) => w.stderr()).join("\n")).toEqual([0, 0]);
      expect(restarts).not.toBeNull();
      await restarts;
      for (const [i, { session }] of sessions.entries()) {
        const rows = await stored(url, session.id);
        expectContiguous(rows);
        expect(rows.length).toBe(600 * 16);
        expect(Math.max(...writers[i]!.acks)).toBe(600 * 16);
      }
      await store.close();
    } finally {
      await stopCluster(cluster);
    }
  });
});
