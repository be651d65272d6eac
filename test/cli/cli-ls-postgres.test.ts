import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import { migrateSchema } from "../../src/storage/postgres/db/schema.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { cli } from "../support/cli.ts";
import { headerLine, rawPool, track } from "../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

describe.skipIf(!pgCluster())("ls on a PostgreSQL store (issue 22)", () => {
  it("a session's size is the bytes of its JSONL (what export --refs writes), after appends, an import and a fork", async () => {
    const url = await freshDatabase();
    const env = { TRANSCRIPT_STORE_URL: url };
    // Appended through the library (the fast append path), with non-ASCII text (bytes, not characters).
    const m = await SessionManager.create("/proj", { store: url });
    m.appendMessage({ role: "user", content: "héllo wörld 日本語", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok".repeat(500) }], timestamp: 2 });
    await m.close();
    // Imported from a file tree (the import path).
    const root = tempDir();
    const f = await SessionManager.create("/proj", { root });
    f.appendMessage({ role: "user", content: "from a file", timestamp: 3 });
    await f.close();
    expect((await cli(["migrate", "--root", root, "--to", url, "--json"])).code).toBe(0);
    // Forked (the copy path).
    const fork = await cli(["fork", m.sessionId, "--json"], { env });
    expect(fork.code).toBe(0);
    const ls = await cli(["ls", "/proj", "--json"], { env });
    expect(ls.records).toHaveLength(3);
    for (const r of ls.records) {
      const exported = await cli(["export", r.id, "--refs"], { env });
      expect(exported.code).toBe(0);
      expect(r.size, r.id).toBe(Buffer.byteLength(exported.stdout));
      expect(r.size).toBeGreaterThan(0);
    }
    const table = await cli(["ls", "/proj"], { env });
    expect(table.stdout).not.toContain(" 0 B ");
  }, 60_000);

  it("a database from before the size column gets its sizes filled in by the schema step", async () => {
    const url = await freshDatabase();
    const db = rawPool(url);
    await migrateSchema(db, 4);
    const id = randomUUID();
    const header = headerLine(id, "/old");
    const lines = ['{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"é"}}', '{"type":"custom","id":"a2"}'];
    await db.query("INSERT INTO sessions (id, cwd, created, header, last_seq, message_count) VALUES ($1, '/old', now(), $2, 2, 1)", [
      id,
      header,
    ]);
    for (const [i, line] of lines.entries())
      await db.query("INSERT INTO entries (session_id, seq, kind, line) VALUES ($1, $2, 'message', $3)", [id, i + 1, line]);
    track(await PgStore.connect(url)); // migrates the schema to this version
    const ls = await cli(["ls", "/old", "--json"], { env: { TRANSCRIPT_STORE_URL: url } });
    expect(ls.code).toBe(0);
    expect(ls.records.map((r) => r.size)).toEqual([Buffer.byteLength(`${[header, ...lines].join("\n")}\n`)]);
  }, 60_000);

  it("after migrate --to, modified is each session's last message time (the recency order survives the import)", async () => {
    const root = tempDir();
    const bucket = join(root, "sessions", cwdBucket("/proj"));
    mkdirSync(bucket, { recursive: true });
    // Written in this order (the import minute), but the first one was active last.
    for (const [n, last] of ["2026-01-09T10:00:00.000Z", "2026-01-03T10:00:00.000Z"].entries()) {
      const id = `0190a5d2-0000-7000-8000-00000000000${n}`;
      const lines = [
        { type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/proj" },
        { type: "message", id: `e${n}000001`, parentId: null, timestamp: last, message: { role: "user", content: "question" } },
      ];
      writeFileSync(join(bucket, `s${n}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    }
    const url = await freshDatabase();
    expect((await cli(["migrate", "--root", root, "--to", url, "--json"])).code).toBe(0);
    const files = await cli(["ls", "/proj", "--root", root, "--json"]);
    const pg = await cli(["ls", "/proj", "--json"], { env: { TRANSCRIPT_STORE_URL: url } });
    expect(pg.records.map((r) => r.id)).toEqual(files.records.map((r) => r.id));
    expect(pg.records.map((r) => r.modified)).toEqual(files.records.map((r) => r.modified));
    expect(pg.records.map((r) => r.modified)).toEqual(["2026-01-09T10:00:00.000Z", "2026-01-03T10:00:00.000Z"]);
  }, 60_000);
  it("pi's session name (the latest session_info entry) is the title, as on the file tree: appended, imported, forked", async () => {
    const url = await freshDatabase();
    const env = { TRANSCRIPT_STORE_URL: url };
    // Appended through the library: two names, the latest wins (trimmed).
    const named = await SessionManager.create("/proj", { store: url });
    named.appendMessage({ role: "user", content: "the first message", timestamp: 1 });
    named.appendEntry({ type: "session_info", name: "first name" });
    named.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    named.appendEntry({ type: "session_info", name: "  Refactor the parser  " });
    await named.close();
    // A name set, then cleared with an empty one: the first message is the title again.
    const cleared = await SessionManager.create("/proj", { store: url });
    cleared.appendMessage({ role: "user", content: "a question", timestamp: 3 });
    cleared.appendEntry({ type: "session_info", name: "gone" });
    cleared.appendEntry({ type: "session_info", name: "" });
    await cleared.close();
    // Imported from a file tree (the import path), and the same file listed from the tree.
    const root = tempDir();
    const f = await SessionManager.create("/proj", { root });
    f.appendMessage({ role: "user", content: "from a file", timestamp: 4 });
    f.appendEntry({ type: "session_info", name: "日本語 name" });
    await f.close();
    expect((await cli(["migrate", "--root", root, "--to", url, "--json"])).code).toBe(0);
    const fork = await cli(["fork", named.sessionId, "--json"], { env }); // the copy path
    expect(fork.code, fork.stderr).toBe(0);
    const ls = await cli(["ls", "/proj", "--json"], { env });
    expect(ls.code, ls.stderr).toBe(0);
    const titles = new Map(ls.records.map((r) => [r.id, r.title]));
    expect(titles.size).toBe(4);
    expect(titles.get(named.sessionId)).toBe("Refactor the parser");
    expect(titles.get(cleared.sessionId)).toBeNull();
    expect(titles.get(f.sessionId)).toBe("日本語 name");
    const forked = ls.records.find((r) => ![named.sessionId, cleared.sessionId, f.sessionId].includes(r.id));
    expect(forked?.title).toBe("Refactor the parser");
    const fileLs = await cli(["ls", "/proj", "--root", root, "--json"], { env: { TRANSCRIPT_STORE_URL: "" } });
    expect(fileLs.records.map((r) => r.title)).toEqual(["日本語 name"]);
    const table = await cli(["ls", "/proj"], { env });
    expect(table.stdout).toContain("Refactor the parser");
    expect(table.stdout).toContain("a question");
  }, 60_000);
  it("a database from before the session-name index lists the names its rows already hold", async () => {
    const url = await freshDatabase();
    const db = rawPool(url);
    await migrateSchema(db, 5);
    const id = randomUUID();
    const lines = [
      '{"type":"session_info","id":"i1","parentId":null,"name":"old name"}',
      '{"type":"message","id":"a1","parentId":"i1","message":{"role":"user","content":"hi"}}',
    ];
    await db.query("INSERT INTO sessions (id, cwd, created, header, last_seq, message_count) VALUES ($1, '/old', now(), $2, 2, 1)", [
      id,
      headerLine(id, "/old"),
    ]);
    for (const [i, line] of lines.entries())
      await db.query("INSERT INTO entries (session_id, seq, kind, line) VALUES ($1, $2, $3, $4)", [id, i + 1, JSON.parse(line).type, line]);
    track(await PgStore.connect(url)); // migrates the schema to this version
    const ls = await cli(["ls", "/old", "--json"], { env: { TRANSCRIPT_STORE_URL: url } });
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.records.map((r) => r.title)).toEqual(["old name"]);
  }, 60_000);
});
