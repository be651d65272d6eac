import { randomUUID } from "node:crypto";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { PgStore } from "../../../../src/storage/postgres/db/index.ts";
import { TranscriptStoreError } from "../../../../src/errors.ts";
import { expectCode } from "../../../support/error-code.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";
import { headerLine, rawPool, track } from "../../../support/pg-sessions.ts";

async function contents(db: pg.Pool, sessionId: string): Promise<Record<string, string>> {
  const { rows } = await db.query<{ id: string; bytes: Buffer }>(
    "SELECT id, string_agg(bytes, ''::bytea ORDER BY n) AS bytes FROM artifact_chunks WHERE session_id = $1 GROUP BY id ORDER BY id",
    [sessionId],
  );
  return Object.fromEntries(rows.map((r) => [r.id, r.bytes.toString()]));
}

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("artifact contents rewritten inside a fork's or a rewrite's transaction", () => {
  it("forkSession's `artifacts` rewrites the fork's copies (chunked, size kept right) and leaves the source's", async () => {
    const url = await freshDatabase();
    const store = track(await PgStore.connect(url, { artifactChunkBytes: 4 }));
    const db = rawPool(url);
    const { session } = await store.createSession(headerLine());
    await store.artifacts.put(session.id, "0.bash.log", "source content", { k: 1 });
    await store.artifacts.put(session.id, "0.meta.json", "{}");
    const forkId = randomUUID();
    await store.forkSession(session.id, headerLine(forkId), {
      artifacts: (id, bytes) => (id.endsWith(".log") ? Buffer.from(`${bytes.toString()} for the fork`) : null),
    });
    expect(await contents(db, forkId)).toEqual({ "0.bash.log": "source content for the fork", "0.meta.json": "{}" });
    expect(await contents(db, session.id)).toEqual({ "0.bash.log": "source content", "0.meta.json": "{}" });
    const listed = await store.artifacts.list(forkId);
    expect(listed.map((a) => [a.id, a.size, a.damaged, a.meta])).toEqual([
      ["0.bash.log", 27, false, { k: 1 }],
      ["0.meta.json", 2, false, {}],
    ]);
  });

  it("a rewrite that throws aborts the fork whole: no session, no rows", async () => {
    const url = await freshDatabase();
    const store = track(await PgStore.connect(url));
    const db = rawPool(url);
    const { session } = await store.createSession(headerLine());
    await store.artifacts.put(session.id, "0.bash.log", "x");
    const forkId = randomUUID();
    const fork = store.forkSession(session.id, headerLine(forkId), {
      artifacts: () => {
        throw new TranscriptStoreError("DECRYPT_FAILED", "refused");
      },
    });
    await expectCode(fork, "DECRYPT_FAILED");
    expect((await db.query("SELECT count(*)::int AS n FROM sessions WHERE id = $1", [forkId])).rows[0].n).toBe(0);
    expect((await db.query("SELECT count(*)::int AS n FROM artifact_chunks WHERE session_id = $1", [forkId])).rows[0].n).toBe(0);
  });
});
