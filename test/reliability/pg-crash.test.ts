import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { PostgresBackend } from "../../src/index.ts";
import type { PgStore } from "../../src/storage/postgres/db/index.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { prng } from "../support/child.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { checkRows, rowsOf, startWriter, type Writer } from "./helpers/pg-writers.ts";

const ROUNDS = Number(process.env.RELIABILITY_ROUNDS ?? 8);
const SEED = Number(process.env.RELIABILITY_SEED ?? 77);
const WRITERS = 3;

/** Ends the lease of `sessionId` now, as the lease of a holder that stopped renewing ends by itself. */
async function expireLease(store: PgStore, sessionId: string): Promise<void> {
  await store.pool.query("UPDATE sessions SET lease_expires = clock_timestamp() - interval '1 second' WHERE id = $1", [sessionId]);
}

describe.skipIf(!pgCluster())("PostgreSQL: SIGKILL writers mid-batch", () => {
  let url: string;
  let store: PgStore;
  beforeAll(async () => {
    url = await freshDatabase();
    store = await rowsOf(url);
  });
  afterAll(async () => {
    await store?.close();
  });

  it("every acknowledged entry is stored once, in order, with its parent; the session opens and takes the next write", async () => {
    const random = prng(SEED);
    const root = tempDir("ts-pg-crash-");
    const sessions: string[] = Array.from({ length: WRITERS }, () => "new");
    const acked: string[][] = Array.from({ length: WRITERS }, () => []);
    let kills = 0;
    let unacknowledgedCommitted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const writers: Writer[] = sessions.map((ref, w) =>
        startWriter({
          mode: "run",
          url,
          ref,
          tag: `w${w}r${round}`,
          seed: SEED * 100 + round * 10 + w,
          root,
          control: join(root, "never"),
        }),
      );
      await Promise.all(
        writers.map(async (writer, w) => {
          sessions[w] = (await writer.next("session ")).slice("session ".length);
          await writer.next("ack ");
          // a seeded moment after the first acknowledgement: while it appends and commits
          const delay = Math.floor(random() * 300);
          await new Promise((r) => setTimeout(r, delay));
          writer.child.kill("SIGKILL");
          const { signal, stderr } = await writer.exited;
          if (signal !== "SIGKILL") throw new Error(`writer ${w} ended before the kill: ${stderr}`);
          kills++;
        }),
      );
      for (let w = 0; w < WRITERS; w++) {
        acked[w]!.push(...writers[w]!.acks);
        const { rows } = await checkRows(store, sessions[w]!, acked[w]!);
        unacknowledgedCommitted += rows - acked[w]!.length;
        acked[w]!.push(...(await store.loadSession(sessions[w]!)).entries.slice(acked[w]!.length).map((e) => e.entryId!));
        await expireLease(store, sessions[w]!);
      }
    }
    const backend = PostgresBackend.of(url);
    try {
      for (let w = 0; w < WRITERS; w++) {
        const reopened = await SessionManager.open(sessions[w]!, { store: backend, root, rehydrate: "lazy" });
        expect(reopened.getEntries().map((e) => e.id)).toEqual(acked[w]);
        expect(reopened.loadReport.malformed).toEqual([]);
        reopened.appendMessage({ role: "user", content: "next write" });
        await reopened.close();
        const { rows } = await checkRows(store, sessions[w]!, [...acked[w]!, reopened.getLeafId()!]);
        expect(rows).toBe(acked[w]!.length + 1);
      }
    } finally {
      await backend.close();
    }
    const entries = acked.reduce((n, a) => n + a.length, 0);
    console.log(
      `pg SIGKILL: ${ROUNDS} rounds × ${WRITERS} writers, ${kills} kills, ${entries} entries stored ` +
        `(${unacknowledgedCommitted} committed but not yet acknowledged when killed), lost = 0`,
    );
    expect(kills).toBe(ROUNDS * WRITERS);
  }, 300_000);
});
