import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../src/index.ts";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { PgCluster } from "../support/pg-cluster.ts";
import { cli } from "../support/cli.ts";
import { expectWholeOrAbsent, untilWriting, writeImportTree } from "../support/pg-import-tree.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { makePng } from "../support/png.ts";
import { psql } from "../support/pg-cluster.ts";
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

  /** A new database on this suite's cluster (removed with the cluster). */
  async function database(name: string): Promise<string> {
    await psql(cluster.binDir, cluster.url, `CREATE DATABASE ${name}`);
    return cluster.url.replace(/\/[^/]*$/, `/${name}`);
  }

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

  it("a move while the server is down completes once it is back: retried under the lease, the new cwd stored", async () => {
    const root = tempDir("ts-pg-move-");
    const backend = PostgresBackend.of(url);
    try {
      const m = await SessionManager.create(join(root, "p"), { store: backend, root, lockStaleMs: 60_000 });
      m.appendMessage({ role: "user", content: "before the move" });
      await m.flush();
      await serverDown(cluster, "fast");
      const moving = m.moveTo(join(root, "moved")).then(
        () => null,
        (err: unknown) => err,
      ); // its first attempts find no server
      await serverUp(cluster);
      expect(await moving).toBeNull();
      expect(m.cwd).toBe(join(root, "moved"));
      m.appendMessage({ role: "user", content: "after the move" });
      await m.close();
      const { session, entries } = await store.loadSession(m.sessionId);
      expect(session.cwd).toBe(join(root, "moved"));
      expect(JSON.parse(session.header).cwd).toBe(join(root, "moved"));
      expect(entries.map((e) => JSON.parse(e.line).message.content)).toEqual(["before the move", "after the move"]);
    } finally {
      await backend.close();
    }
  }, 60_000);

  it("gc across a server restart resumes by itself: every orphan deleted, no referenced blob (lost = 0)", async () => {
    const db = await database("gc_restart");
    const root = tempDir("ts-pg-gc-restart-");
    const backend = PostgresBackend.of(db);
    const gcStore = await PgStore.connect(db);
    try {
      const images = [1, 2, 3].map((seed) => makePng(24, 24, seed).toString("base64"));
      const m = await SessionManager.create(join(root, "g"), { store: backend, root });
      for (const data of images) m.appendMessage({ role: "user", content: [{ type: "image", data, mimeType: "image/png" }] });
      await m.close();
      const orphans = 4000;
      await rawPool(db).query(
        `INSERT INTO blobs (sha256, bytes, size, touched)
         SELECT encode(sha256(b), 'hex'), b, length(b), now() - interval '2 hours'
           FROM (SELECT convert_to('orphan ' || i, 'UTF8') AS b FROM generate_series(1, $1::int) i) o`,
        [orphans],
      );
      let finished = false;
      const running = gcStore.gc({ graceMs: 0, batch: 2 }).finally(() => (finished = true));
      running.catch(() => {}); // awaited below, once the server is back
      const counted = rawPool(db);
      while ((await counted.query("SELECT count(*)::int AS n FROM blobs")).rows[0].n > orphans + 3 - 50);
      await serverDown(cluster, "immediate"); // the sweep is cut between (or inside) its batches
      expect(finished).toBe(false);
      await serverUp(cluster);
      const report = await running;
      const { rows } = await rawPool(db).query<{ n: number }>("SELECT count(*)::int AS n FROM blobs");
      expect(rows[0]!.n).toBe(3);
      // a batch whose COMMIT reply was cut is deleted but may be missing from the report, never more
      expect(report.deleted.length).toBeLessThanOrEqual(orphans);
      expect(report.deleted.length).toBeGreaterThanOrEqual(orphans - 2);
      const reopened = await SessionManager.open(m.sessionId, { store: backend, readOnly: true });
      expect(reopened.getEntries().map((e) => (e.message as { content: Array<{ data: string }> }).content[0]!.data)).toEqual(images);
      await reopened.close();
      console.log(`pg restart during gc: ${report.deleted.length} of ${orphans} orphans reported deleted, all gone, lost = 0`);
    } finally {
      await gcStore.close();
      await backend.close();
    }
  }, 120_000);

  it("migrate --to across a server restart: each import is retried whole; every session arrives whole (lost = 0)", async () => {
    const db = await database("migrate_restart");
    await (await PgStore.connect(db)).close();
    const root = tempDir("ts-pg-migrate-restart-");
    const sessions = await writeImportTree(root);
    const app = "ts-migrate-restart";
    let finished = false;
    const running = cli(["migrate", "--root", root, "--to", `${db}?application_name=${app}`, "--json"]).finally(() => (finished = true));
    running.catch(() => {}); // awaited below, once the server is back
    await untilWriting(db, app, () => finished, 20);
    await serverDown(cluster, "immediate"); // an import transaction is cut
    expect(finished).toBe(false);
    await serverUp(cluster);
    const result = await running;
    expect(result.code, result.stdout).toBe(0);
    const statuses = result.records.filter((r) => r.type === "file").map((r) => r.status);
    // an import whose COMMIT reply was cut finds itself stored on its retry: unchanged
    expect(statuses.every((s) => s === "imported" || s === "unchanged")).toBe(true);
    expect(await expectWholeOrAbsent(db, sessions)).toBe(sessions.size);
    console.log(`pg restart during migrate --to: ${statuses.join(", ")}, lost = 0`);
  }, 120_000);
});
