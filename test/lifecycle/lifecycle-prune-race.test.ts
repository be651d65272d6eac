import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PostgresBackend } from "../../src/index.ts";
import { rawPool, track } from "../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/lifecycle-child.ts");

describe("prune racing a writer in another process", () => {
  it("skips the live session, moves the idle one, and loses no acknowledged append", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const idle = await SessionManager.create("/race", { root });
    idle.appendMessage({ role: "user", content: "idle", timestamp: 1 } as never);
    await idle.close();

    const child = spawnTs(CHILD, ["writer", root, "/race"]);
    let acked = 0;
    let ready: { id: string; path: string } | null = null;
    const started = new Promise<void>((resolve) =>
      onLines(child, (line) => {
        const [word, a, b] = line.split(" ");
        if (word === "ready") {
          ready = { id: a!, path: b! };
        } else if (word === "acked") {
          acked = Number(a);
          if (acked === 3) resolve(); // the writer is mid-stream when prune starts
        }
      }),
    );
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    await started;
    const live = ready as unknown as { id: string; path: string };
    // everything is "older than a day" a year from now: only the live writer keeps its session
    const life = Lifecycle.open({ root, now: () => new Date(Date.now() + 365 * 86_400_000) });
    const report = await life.prune({ olderThanMs: 86_400_000 });
    const ackedAtPrune = acked;
    child.kill("SIGKILL");
    await exited;

    expect(report.trashed.map((e) => e.sessionId)).toEqual([idle.sessionId]);
    expect(report.skipped.map((s) => [s.session.id, s.reason])).toEqual([[live.id, "live-writer"]]);
    const lines = readFileSync(live.path, "utf8").split("\n");
    const texts = new Set(lines.filter(Boolean).map((l) => JSON.parse(l).message?.content));
    for (let i = 1; i <= acked; i++) expect(texts.has(`line ${i}`)).toBe(true);
    expect(acked).toBeGreaterThanOrEqual(ackedAtPrune);
    expect((await life.listTrash()).map((e) => e.sessionId)).toEqual([idle.sessionId]);
  });
});

describe.skipIf(!pgCluster())("prune racing a writer in another process (PostgreSQL)", () => {
  it("skips the session whose lease is live, moves the idle one, and loses no acknowledged append", { timeout: 60_000 }, async () => {
    const url = await freshDatabase();
    const root = tempDir();
    const store = PostgresBackend.of(url);
    try {
      const idle = await SessionManager.create("/race", { store });
      idle.appendMessage({ role: "user", content: "idle", timestamp: 1 } as never);
      await idle.close();
      const child = spawnTs(CHILD, ["writer", root, "/race", url]);
      let acked = 0;
      let liveId = "";
      const started = new Promise<void>((resolve) =>
        onLines(child, (line) => {
          const [word, a] = line.split(" ");
          if (word === "ready") {
            liveId = a!;
          } else if (word === "acked") {
            acked = Number(a);
            if (acked === 3) resolve(); // the writer is mid-stream when prune starts
          }
        }),
      );
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
      await started;
      const life = Lifecycle.open({ store, now: () => new Date(Date.now() + 365 * 86_400_000) });
      const report = await life.prune({ olderThanMs: 86_400_000 });
      child.kill("SIGKILL");
      await exited;
      expect(report.trashed.map((e) => e.sessionId)).toEqual([idle.sessionId]);
      expect(report.skipped.map((s) => [s.session.id, s.reason])).toEqual([[liveId, "live-writer"]]);
      const db = track(rawPool(url));
      const { rows } = await db.query("SELECT line FROM entries WHERE session_id = $1", [liveId]);
      const texts = new Set(rows.map((r) => JSON.parse(r.line).message?.content));
      for (let i = 1; i <= acked; i++) expect(texts.has(`line ${i}`)).toBe(true);
      expect(acked).toBeGreaterThanOrEqual(3);
    } finally {
      await store.close();
    }
  });
});
