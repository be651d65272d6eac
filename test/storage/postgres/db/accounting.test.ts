import { describe, expect, it } from "vitest";
import { accountPgSession, accountPgStore } from "../../../../src/storage/postgres/db/accounting.ts";
import { SessionManager } from "../../../../src/session/session-manager.ts";
import { closeUrlStores } from "../../../../src/storage/store-url.ts";
import { rawPool } from "../../../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";

describe.skipIf(!pgCluster())("accounting in PostgreSQL", () => {
  it("one snapshot scan accounts each session as a per-session read does, across batches, sessions without entries too", async () => {
    const url = await freshDatabase();
    const ids: string[] = [];
    try {
      for (const n of [2, 0, 3]) {
        const m = await SessionManager.create(`/w/${n}`, { store: url });
        for (let i = 0; i < n; i++) m.appendMessage({ role: i % 2 ? "assistant" : "user", content: `message ${i} of ${n}` } as never);
        await m.close();
        ids.push(m.sessionId);
      }
    } finally {
      await closeUrlStores();
    }
    const pool = rawPool(url);
    expect((await pool.query("SELECT count(*)::int AS n FROM sessions")).rows[0].n).toBe(3);
    for (const batch of [1, 2, 1000]) {
      const scan = await accountPgStore(pool, undefined, batch);
      const byId = new Map(scan.accounts.map((a) => [a.sessionId, a]));
      expect([...byId.keys()].sort()).toEqual([...ids].sort());
      for (const id of ids) expect(byId.get(id), `${id} in batches of ${batch}`).toEqual(await accountPgSession(pool, id));
    }
    const { rows } = await pool.query("SELECT id, octet_length(header) + 1 + body_bytes AS bytes, message_count FROM sessions");
    const scan = await accountPgStore(pool);
    for (const r of rows) expect(scan.accounts.find((a) => a.sessionId === r.id)!.bytes).toBe(Number(r.bytes));
    expect(scan.accounts.find((a) => a.sessionId === ids[1])!.lines).toBe(1);
  });

  it("stops when onSession throws (an interrupted CLI) and rethrows that very error", async () => {
    const url = await freshDatabase();
    try {
      for (const cwd of ["/a", "/b"]) {
        const m = await SessionManager.create(cwd, { store: url });
        m.appendMessage({ role: "user", content: "hi" });
        await m.close();
      }
    } finally {
      await closeUrlStores();
    }
    const stop = new Error("interrupted");
    let calls = 0;
    const scan = accountPgStore(rawPool(url), () => {
      if (++calls === 2) throw stop;
    });
    await expect(scan).rejects.toBe(stop);
    expect(calls).toBe(2);
  });
});
