import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PgStore } from "../../src/storage/postgres/db/index.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { checkRows, startWriter, suiteDatabase, untilAcked, type Writer } from "./helpers/pg-writers.ts";

const STALE_MS = 2000;
const ROUNDS = Number(process.env.RELIABILITY_LEASE_ROUNDS ?? 3);

/** Waits (polling the server's clock) until the lease of `sessionId` has expired. */
async function untilLeaseExpired(store: PgStore, sessionId: string): Promise<void> {
  for (;;) {
    const { rows } = await store.pool.query<{ expired: boolean }>(
      "SELECT lease_expires < clock_timestamp() AS expired FROM sessions WHERE id = $1",
      [sessionId],
    );
    if (rows[0]!.expired) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of every stored entry of `sessionId`, in seq order. */
async function texts(store: PgStore, sessionId: string): Promise<string[]> {
  const { entries } = await store.loadSession(sessionId);
  return entries.map((e) => {
    const content = (JSON.parse(e.line) as { message: { content: unknown } }).message.content;
    return typeof content === "string" ? content : (content as Array<{ text?: string }>)[0]!.text!;
  });
}

describe.skipIf(!pgCluster())("PostgreSQL: two processes racing for one session's lease", () => {
  const db = suiteDatabase();

  async function newSession(root: string): Promise<string> {
    const m = await SessionManager.create(join(root, "p"), { store: db.backend, root });
    m.appendMessage({ role: "user", content: "start" });
    await m.close();
    return m.sessionId;
  }

  /** Two writers start at once on `id`: returns the one that holds the lease, after asserting the other got SESSION_LOCKED. */
  async function race(
    id: string,
    root: string,
    mode: "run" | "busy" | "busy-artifact",
    round: number,
  ): Promise<{ holder: Writer; tag: string }> {
    const control = join(root, `go-${round}`);
    const writers = ["a", "b"].map((t, i) =>
      startWriter({ mode, url: db.url, ref: id, tag: `holder${t}${round}`, seed: round * 2 + i, root, control, lockStaleMs: STALE_MS }),
    );
    const first = await Promise.all(writers.map((w) => Promise.race([w.next("session "), w.next("locked")])));
    expect(first.map((l) => l.split(" ")[0]).sort()).toEqual(["locked", "session"]);
    const loser = writers[first.indexOf("locked")]!;
    expect((await loser.exited).code).toBe(0);
    const won = first.findIndex((l) => l.startsWith("session "));
    return { holder: writers[won]!, tag: `holder${["a", "b"][won]}${round}` };
  }

  it("exactly one writes; a holder SIGSTOPped past its lease is taken over and, resumed, never appends again", async () => {
    const root = tempDir("ts-pg-lease-");
    const id = await newSession(root);
    const acked: string[] = [];
    let holderRows = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { holder } = await race(id, root, "run", round);
      try {
        await untilAcked(holder, 20 + round * 7);
        holder.child.kill("SIGSTOP"); // wherever it is: between appends, mid-commit, holding a connection
        await untilLeaseExpired(db.store, id);
        const taker = await SessionManager.open(id, { store: db.backend, root, lockStaleMs: STALE_MS });
        taker.appendMessage({ role: "user", content: `taker-1/${round}` });
        await taker.flush();
        holder.child.kill("SIGCONT");
        // its flush, its append or its lease renewal finds the lease gone first; whichever, it turns read-only
        expect(await holder.next("lost ")).toMatch(/^lost (SESSION_LOCKED|READ_ONLY) true$/);
        expect(await holder.next("flush ")).toBe("flush SESSION_LOCKED");
        expect(await holder.next("after ")).toBe("after READ_ONLY");
        // (a commit it finished just before the stop may be acknowledged after it resumes: its rows precede the takeover)
        acked.push(...holder.acks);
        taker.appendMessage({ role: "user", content: `taker-2/${round}` });
        await taker.close();
        const all = await texts(db.store, id);
        const takeover = all.indexOf(`taker-1/${round}`);
        expect(all.slice(takeover)).toEqual([`taker-1/${round}`, `taker-2/${round}`]);
        holderRows = all.filter((t) => t.startsWith("holder")).length;
        const stored = (await db.store.loadSession(id)).entries.map((e) => e.entryId!);
        acked.splice(0, acked.length, ...stored.filter((e) => acked.includes(e)), ...stored.slice(-2));
        await checkRows(db.store, id, acked);
      } finally {
        holder.child.kill("SIGKILL");
      }
    }
    console.log(
      `pg lease race: ${ROUNDS} rounds of 2 racing writers (${ROUNDS} SESSION_LOCKED at open), ${ROUNDS} SIGSTOP takeovers, ` +
        `${holderRows} holder rows, none after a takeover, lost = 0`,
    );
  }, 180_000);

  for (const mode of ["busy", "busy-artifact"] as const) {
    const what = mode === "busy" ? "an entry" : "an artifact";
    it(`the database's fence refuses ${what} a holder queued before its lease was taken over`, async () => {
      const root = tempDir("ts-pg-fence-");
      const id = await newSession(root);
      // one holder (no racer: once it blocks, its lease ends, and a late racer could rightly take it)
      const tag = "holder0";
      const control = join(root, "go-0");
      const holder = startWriter({ mode, url: db.url, ref: id, tag, seed: 1, root, control, lockStaleMs: STALE_MS });
      try {
        await holder.next("ready");
        await untilLeaseExpired(db.store, id);
        const taker = await SessionManager.open(id, { store: db.backend, root, lockStaleMs: STALE_MS });
        taker.appendMessage({ role: "user", content: "taker-1" });
        await taker.flush();
        writeFileSync(control, "");
        expect(await holder.next("lost ")).toBe("lost SESSION_LOCKED true");
        expect(await holder.next("flush ")).toBe("flush SESSION_LOCKED");
        expect(await holder.next("after ")).toBe("after READ_ONLY");
        await taker.close();
        expect(await texts(db.store, id)).toEqual(["start", `${tag}/0`, "taker-1"]);
        expect((await db.store.artifacts.list(id)).map((a) => a.id)).toEqual([]);
      } finally {
        holder.child.kill("SIGKILL");
      }
    }, 60_000);
  }
});
