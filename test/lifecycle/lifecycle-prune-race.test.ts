import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
          resolve();
        } else if (word === "acked") acked = Number(a);
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
