import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { blob, entryLine, freshStore, headerLine, rawPool } from "../../../support/pg-sessions.ts";
import { pgCluster } from "../../../support/postgres.ts";

/*
 * A transaction that creates a session with rows (a deferred session's first commit, a fork) may
 * insert blob rows another writer of the same blob then waits on: like a fenced append, it must
 * not sit idle (its process paused) past its lease's length. A trigger records, at each entry
 * insert, the idle bound of the transaction doing it.
 */
describe.skipIf(!pgCluster())("PostgreSQL transactions creating a session bound their idle time", () => {
  it("createSessionWithRows and forkSession (with rows of its own) run under the lease's length as idle bound", async () => {
    const { store, url } = await freshStore();
    const db = rawPool(url);
    await db.query("CREATE TABLE ts_seen (session_id text, idle text)");
    await db.query(`CREATE FUNCTION ts_seen() RETURNS trigger LANGUAGE plpgsql AS
                      $$ BEGIN INSERT INTO ts_seen VALUES (NEW.session_id, current_setting('idle_in_transaction_session_timeout'));
                      RETURN NEW; END $$`);
    await db.query("CREATE TRIGGER ts_seen BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION ts_seen()");
    const png = blob("png");
    const lines = [{ lines: [entryLine(1), entryLine(2, [png.sha256])], blobs: [png] }];
    const created = await store.createSessionWithRows(headerLine(), lines, { lease: { holder: "a", ttlMs: 7000 } });
    const fork = await store.forkSession(created.session.id, headerLine(randomUUID()), {
      lease: { holder: "b", ttlMs: 9000 },
      uptoSeq: 1,
      lines: [{ lines: [entryLine(2, [png.sha256])], blobs: [] }],
    });
    const bare = await store.createSessionWithRows(headerLine(), [{ lines: [entryLine(1)], blobs: [] }]);
    const seen = async (id: string) =>
      (await db.query<{ idle: string }>("SELECT DISTINCT idle FROM ts_seen WHERE session_id = $1", [id])).rows.map((r) => r.idle);
    expect(await seen(created.session.id)).toEqual(["7s"]);
    expect(await seen(fork.session.id)).toEqual(["9s"]);
    expect(await seen(bare.session.id)).toEqual(["10s"]); // no lease: DEFAULT_IMPORT_IDLE_MS
    await db.end();
  });
});
