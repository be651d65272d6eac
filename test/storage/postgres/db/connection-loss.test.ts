import { describe, expect, it } from "vitest";
import { TranscriptStoreError } from "../../../../src/errors.ts";
import { pgCluster } from "../../../support/postgres.ts";
import { blob, entryLine, freshStore, headerLine, rawPool } from "../../../support/pg-sessions.ts";

// a text batch commits in its one statement (append-fast.ts); a batch with a blob in an explicit transaction
const CASES = [
  { name: "a text batch (one statement)", refs: false, committing: /^WITH fenced AS/ },
  { name: "a batch with a blob (BEGIN … COMMIT)", refs: true, committing: /^COMMIT$/ },
];

describe.skipIf(!pgCluster())("PostgreSQL connection lost while committing", () => {
  it.each(CASES)(
    "fails $name with PERSISTENCE_FAILED and its cause, commits nothing; a retry stores it once",
    async ({ refs, committing }) => {
      const { store, url } = await freshStore();
      const { session, token } = await store.createSession(headerLine(), { lease: { holder: "w", ttlMs: 60_000 } });
      const db = rawPool(url);
      // a deferred constraint trigger runs inside COMMIT: it waits on an advisory lock the test holds
      await db.query(`CREATE FUNCTION at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_lock_shared(77); PERFORM pg_advisory_unlock_shared(77); RETURN NULL; END $$`);
      await db.query(`CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON entries DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION at_commit()`);
      const gate = await db.connect();
      await gate.query("SELECT pg_advisory_lock(77)");
      const png = blob("png");
      const batch = [entryLine(1), entryLine(2, refs ? [png.sha256] : [])];
      const blobs = refs ? [png] : [];
      const append = store.appendBatch(session.id, token!, 1, batch, blobs).catch((err: unknown) => err);
      let pid: number | undefined;
      while (pid === undefined) {
        const { rows } = await db.query("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
        pid = rows[0]?.pid;
      }
      const { rows: activity } = await db.query("SELECT query FROM pg_stat_activity WHERE pid = $1", [pid]);
      expect(activity[0].query.trim()).toMatch(committing);
      await db.query("SELECT pg_terminate_backend($1)", [pid]);
      await gate.query("SELECT pg_advisory_unlock(77)");
      gate.release();

      const err = await append;
      expect(err).toBeInstanceOf(TranscriptStoreError);
      expect(err).toMatchObject({ code: "PERSISTENCE_FAILED" });
      expect((err as Error).cause).toBeInstanceOf(Error);
      expect((await db.query("SELECT count(*)::int AS n FROM entries")).rows[0].n).toBe(0);

      // the caller kept the batch: the retry (same seqs) goes through on a new connection
      expect(await store.appendBatch(session.id, token!, 1, batch, blobs)).toEqual({ firstSeq: 1, lastSeq: 2, alreadyStored: 0 });
      expect(await store.appendBatch(session.id, token!, 1, batch, blobs)).toEqual({ firstSeq: 1, lastSeq: 2, alreadyStored: 2 });
      expect((await store.loadSession(session.id)).entries.map((e) => e.line)).toEqual(batch.map((l) => l.line));
    },
  );
});
