import { describe, expect, it } from "vitest";
import { Lifecycle, PostgresBackend, SessionManager } from "../../../../src/index.ts";
import { TRASH_HOLDER } from "../../../../src/storage/postgres/db/lifecycle-rows.ts";
import { expectCode } from "../../../support/error-code.ts";
import { rawPool, track } from "../../../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";

describe.skipIf(!pgCluster())("PostgreSQL lifecycle rows", () => {
  it("a writer whose lease lapsed is fenced off once the session is trashed: its late append is refused, nothing lands", async () => {
    const url = await freshDatabase();
    const store = PostgresBackend.of(url);
    try {
      const writer = await SessionManager.create("/pg/late", { store });
      writer.appendMessage({ role: "user", content: "before", timestamp: 1 });
      await writer.flush();
      const db = track(rawPool(url));
      // The writer paused past its lease (as a stopped process would): the lease is expired, not released.
      await db.query("UPDATE sessions SET lease_expires = clock_timestamp() - interval '1 second' WHERE id = $1", [writer.sessionId]);
      const life = Lifecycle.open({ store });
      await life.rm(writer.sessionId);
      const lease = await db.query(
        "SELECT lease_holder, lease_expires = '9999-12-31T00:00:00Z'::timestamptz AS forever FROM sessions WHERE id = $1",
        [writer.sessionId],
      );
      expect(lease.rows[0]).toEqual({ lease_holder: TRASH_HOLDER, forever: true });
      const count = async () =>
        Number((await db.query("SELECT count(*) FROM entries WHERE session_id = $1", [writer.sessionId])).rows[0].count);
      const before = await count();
      let failed: unknown = null;
      try {
        writer.appendMessage({ role: "user", content: "too late", timestamp: 2 });
        await writer.flush();
      } catch (err) {
        failed = err;
      }
      expect((failed as { code?: string } | null)?.code).toBe("SESSION_LOCKED");
      expect(await count()).toBe(before);
      await writer.close().catch(() => {});
      // a writable open is refused while trashed; read-only still reads it
      await expectCode(SessionManager.open(writer.sessionId, { store }), "SESSION_LOCKED");
      const reader = await SessionManager.open(writer.sessionId, { store, readOnly: true });
      expect(reader.getEntries()).toHaveLength(before);
      await reader.close();
      // restore gives the lease back to nobody: a writer may open it again
      await life.restore(writer.sessionId);
      const again = await SessionManager.open(writer.sessionId, { store });
      again.appendMessage({ role: "user", content: "after restore", timestamp: 3 });
      await again.close();
      expect(await count()).toBe(before + 1);
      // deleting the state table's rows is the only way to lose it: a purge removes the session and its row together
      await life.rm(writer.sessionId);
      await life.purge({ refs: [writer.sessionId] });
      expect((await db.query("SELECT count(*)::int AS n FROM session_lifecycle")).rows[0].n).toBe(0);
      expect((await db.query("SELECT count(*)::int AS n FROM entries")).rows[0].n).toBe(0);
    } finally {
      await store.close();
    }
  });
});
