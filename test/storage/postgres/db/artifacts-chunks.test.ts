import { randomUUID } from "node:crypto";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { PgStore, SCHEMA_VERSION } from "../../../../src/storage/postgres/db/index.ts";
import { migrateSchema } from "../../../../src/storage/postgres/db/schema.ts";
import { freshDatabase, pgCluster } from "../../../support/postgres.ts";
import { headerLine, rawPool, track } from "../../../support/pg-sessions.ts";

/** Bytes 0..n-1 of a pattern no chunk size lines up with. */
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff));

async function chunkRows(db: pg.Pool, sessionId: string, id: string): Promise<Buffer[]> {
  const { rows } = await db.query<{ n: number; bytes: Buffer }>(
    "SELECT n, bytes FROM artifact_chunks WHERE session_id = $1 AND id = $2 ORDER BY n",
    [sessionId, id],
  );
  expect(rows.map((r) => r.n)).toEqual(rows.map((_, i) => i));
  return rows.map((r) => r.bytes);
}

describe.skipIf(!pgCluster())("PostgreSQL artifacts are stored and read in chunks", () => {
  it("cuts content into rows of at most artifactChunkBytes, whatever pieces it came in, and reads it back in order", async () => {
    const url = await freshDatabase();
    const store = track(await PgStore.connect(url, { artifactChunkBytes: 7 }));
    const db = rawPool(url);
    const { session } = await store.createSession(headerLine());
    const content = bytes(100);

    expect(await store.artifacts.put(session.id, "0.bash.log", content, { k: 1 })).toBe(100);
    const stored = await chunkRows(db, session.id, "0.bash.log");
    expect(stored.map((c) => c.length)).toEqual([...Array(14).fill(7), 2]);
    expect(Buffer.concat(stored)).toEqual(content);

    // the same bytes as odd pieces from an async source: the same rows
    async function* pieces() {
      for (const [from, to] of [
        [0, 3],
        [3, 14],
        [14, 15],
        [15, 15],
        [15, 60],
        [60, 100],
      ])
        yield content.subarray(from, to);
    }
    expect(await store.artifacts.put(session.id, "1.bash.log", pieces())).toBe(100);
    expect(await chunkRows(db, session.id, "1.bash.log")).toEqual(stored);

    const seen: Buffer[] = [];
    const info = await store.artifacts.read(session.id, "0.bash.log", (chunk) => {
      seen.push(Buffer.from(chunk));
    });
    expect(info).toMatchObject({ id: "0.bash.log", size: 100, meta: { k: 1 } });
    expect(seen.map((c) => c.length)).toEqual(stored.map((c) => c.length));
    expect(Buffer.concat(seen)).toEqual(content);
    expect((await store.artifacts.get(session.id, "1.bash.log"))!.content).toEqual(content);
    expect(await store.artifacts.read(session.id, "absent", () => {})).toBeNull();

    // a shorter replacement leaves no chunk of the longer one; empty content is no chunk at all
    await store.artifacts.put(session.id, "0.bash.log", "short");
    expect(await chunkRows(db, session.id, "0.bash.log")).toEqual([Buffer.from("short")]);
    await store.artifacts.put(session.id, "0.bash.log", new Uint8Array(0));
    expect(await chunkRows(db, session.id, "0.bash.log")).toEqual([]);
    expect(await store.artifacts.get(session.id, "0.bash.log")).toMatchObject({ size: 0, content: Buffer.alloc(0) });
    expect((await store.artifacts.list(session.id)).map((a) => [a.id, a.size])).toEqual([
      ["0.bash.log", 0],
      ["1.bash.log", 100],
    ]);

    // a fork copies the chunks server-side; a delete takes them along
    const fork = await store.forkSession(session.id, headerLine());
    expect((await store.artifacts.get(fork.session.id, "1.bash.log"))!.content).toEqual(content);
    expect(await store.artifacts.delete(session.id, "1.bash.log")).toBe(true);
    expect(await chunkRows(db, session.id, "1.bash.log")).toEqual([]);
    expect(await chunkRows(db, fork.session.id, "1.bash.log")).toEqual(stored);
  });

  it("refuses a damaged artifact (a chunk missing) with PERSISTENCE_FAILED before delivering any byte, and keeps its rows", async () => {
    const url = await freshDatabase();
    const store = track(await PgStore.connect(url, { artifactChunkBytes: 7 }));
    const db = rawPool(url);
    const { session } = await store.createSession(headerLine());
    await store.artifacts.put(session.id, "a", bytes(50));
    await db.query("DELETE FROM artifact_chunks WHERE session_id = $1 AND n = 3", [session.id]);
    let delivered = 0;
    await expect(store.artifacts.read(session.id, "a", () => void delivered++)).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    expect(delivered).toBe(0);
    await expect(store.artifacts.get(session.id, "a")).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    expect((await chunkRows(db, session.id, "a").catch(() => null)) ?? "gap").toBe("gap");
    await store.artifacts.put(session.id, "b", bytes(20));
    expect((await store.artifacts.list(session.id)).map((a) => [a.id, a.damaged])).toEqual([
      ["a", true],
      ["b", false],
    ]);
  });

  it("accepts every id a directory can hold as one file name (up to 255 bytes), refuses the rest", async () => {
    const url = await freshDatabase();
    const store = track(await PgStore.connect(url));
    const { session } = await store.createSession(headerLine());
    for (const id of [`${"a".repeat(208)}.md`, "é".repeat(127), "notes 1.txt", ".hidden"]) {
      await store.artifacts.put(session.id, id, id);
      expect((await store.artifacts.get(session.id, id))!.content.toString()).toBe(id);
    }
    for (const id of ["", ".", "..", "a/b", "a\0b", "x".repeat(256), "é".repeat(128), "\uD800"]) {
      await expect(store.artifacts.put(session.id, id, "y")).rejects.toMatchObject({ code: "INVALID_ARTIFACT_ID" });
    }
  });

  it("refuses an artifactChunkBytes outside 1..64 MiB (INVALID_OPTION)", async () => {
    for (const artifactChunkBytes of [0, 1.5, 64 * 1024 * 1024 + 1]) {
      await expect(PgStore.connect("postgres://localhost/none", { artifactChunkBytes })).rejects.toMatchObject({ code: "INVALID_OPTION" });
    }
  });

  it("migrates a version-1 database: each content is cut into 1 MiB chunks server-side, sizes kept", async () => {
    const url = await freshDatabase();
    const db = rawPool(url);
    await migrateSchema(db, 1);
    const id = randomUUID();
    await db.query("INSERT INTO sessions (id, cwd, created, header) VALUES ($1, '/w', now(), $2)", [id, headerLine(id)]);
    const big = bytes(2.5 * 1024 * 1024);
    await db.query("INSERT INTO artifacts (session_id, id, meta, content) VALUES ($1, 'big', '{\"m\":1}', $2), ($1, 'empty', '{}', '')", [
      id,
      big,
    ]);
    const store = track(await PgStore.connect(url));
    expect((await db.query("SELECT max(version) AS v FROM ts_schema_version")).rows[0].v).toBe(SCHEMA_VERSION);
    expect((await chunkRows(db, id, "big")).map((c) => c.length)).toEqual([1048576, 1048576, 524288]);
    const got = (await store.artifacts.get(id, "big"))!;
    expect(got).toMatchObject({ size: big.length, meta: { m: 1 } });
    // Buffer.equals: vitest's deep equality walks a 2.5 MB buffer key by key
    expect(got.content.equals(big)).toBe(true);
    expect(await store.artifacts.get(id, "empty")).toMatchObject({ size: 0, content: Buffer.alloc(0) });
  });
});
