import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../src/index.ts";
import type { PgStore } from "../../src/postgres/index.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { PgCluster } from "../support/pg-cluster.ts";
import { findPgBin, pgCluster, restartCluster, serverDown, serverUp, startCluster, stopCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { checkRows, rowsOf, startWriter, untilAcked, type Writer } from "./helpers/pg-writers.ts";

const WRITERS = 4;

/**
 * Restarting the server cuts every connection of every test file of the run, so this suite starts a
 * server of its own (same binaries as the run's cluster) and restarts only that one.
 */
describe.skipIf(!pgCluster())("PostgreSQL: the server restarts under running writers", () => {
  let cluster: PgCluster;
  let url: string;
  let store: PgStore;
  beforeAll(async () => {
    cluster = await startCluster(findPgBin()!);
    url = cluster.url; // the whole throwaway cluster is this suite's
    store = await rowsOf(url);
  });
  afterAll(async () => {
    await store?.close();
    if (cluster) await stopCluster(cluster);
  });

  /** Waits until every writer acknowledged `more` entries beyond what it had when called. */
  async function progress(writers: Writer[], more: number): Promise<void> {
    await Promise.all(writers.map((w) => untilAcked(w, w.acks.length + more)));
  }

  it("a flush in flight while the server is down resolves once it is back: the writer reconnects by itself", async () => {
    const root = tempDir("ts-pg-reconnect-");
    const backend = PostgresBackend.of(url);
    try {
      const m = await SessionManager.create(join(root, "p"), { store: backend, root, lockStaleMs: 60_000 });
      for (let i = 0; i < 10; i++) m.appendMessage({ role: "user", content: `before ${i}` });
      await m.flush();
      await serverDown(cluster, "fast");
      for (let i = 0; i < 5; i++) m.appendMessage({ role: "user", content: `during ${i}` });
      const flushed = m.flush(); // its first attempts find no server (connection refused)
      await serverUp(cluster);
      await flushed;
      expect(m.isReadOnly).toBe(false);
      await m.close();
      const { entries } = await store.loadSession(m.sessionId);
      expect(entries.map((e) => JSON.parse(e.line).message.content)).toEqual([
        ...Array.from({ length: 10 }, (_, i) => `before ${i}`),
        ...Array.from({ length: 5 }, (_, i) => `during ${i}`),
      ]);
    } finally {
      await backend.close();
    }
  }, 60_000);

  it("writers reconnect; flush() fails while the server is away, commits once it is back; nothing acked lost or doubled", async () => {
    const root = tempDir("ts-pg-restart-");
    const control = join(root, "stop");
    const writers = Array.from({ length: WRITERS }, (_, w) =>
      startWriter({ mode: "run", url, ref: "new", tag: `w${w}`, seed: 500 + w, root, control, lockStaleMs: 60_000 }),
    );
    try {
      const sessions = await Promise.all(writers.map(async (w) => (await w.next("session ")).slice("session ".length)));
      await progress(writers, 20);
      let restarts = 0;
      for (const mode of ["fast", "immediate", "fast"] as const) {
        // pg_ctl restart: every connection is cut, in-flight commits included (their outcome unknown to the writer)
        await restartCluster(cluster, mode);
        restarts++;
        await progress(writers, 20);
      }
      const failsInRestarts = writers.reduce((n, w) => n + w.count("fail "), 0);
      // An outage longer than a flush's own retries: every writer sees flush() fail, keeps appending, and retries.
      await serverDown(cluster, "immediate");
      await Promise.all(writers.map((w) => w.next("fail ")));
      const failuresBefore = writers.map((w) => w.acks.length);
      await serverUp(cluster);
      restarts++;
      await progress(writers, 20);
      writeFileSync(control, "");
      for (const w of writers) {
        expect(await w.next("closed")).toBe("closed");
        const { code, stderr } = await w.exited;
        expect(code, stderr).toBe(0);
      }
      let rows = 0;
      let acked = 0;
      for (let w = 0; w < WRITERS; w++) {
        const writer = writers[w]!;
        // close() flushed the rest: every entry it appended is stored, and acknowledged ones in order
        const checked = await checkRows(store, sessions[w]!, writer.acks);
        rows += checked.rows;
        acked += checked.acked;
        expect(writer.acks.length).toBeGreaterThan(failuresBefore[w]!);
        expect(writer.lines.filter((l) => l.startsWith("fail ")).every((l) => l === "fail PERSISTENCE_FAILED")).toBe(true);
      }
      const fails = writers.reduce((n, w) => n + w.count("fail "), 0);
      console.log(
        `pg restart: ${WRITERS} writers, ${restarts} restarts (fast, immediate, fast, stop+start), ` +
          `${acked} entries acknowledged, ${rows} stored, ${failsInRestarts} failed flushes during the restarts, ` +
          `${fails - failsInRestarts} during the stop+start (retried), lost = 0`,
      );
    } finally {
      for (const w of writers) w.child.kill("SIGKILL");
    }
  }, 300_000);
});
