import { existsSync, readdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import type { PgStore } from "../../../src/storage/postgres/db/index.ts";
import { workingDirsRoot } from "../../../src/storage/postgres/pg-working-dirs.ts";
import { injectFault } from "../../support/fault.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { rawPool } from "../../support/pg-sessions.ts";

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

describe.skipIf(!pgCluster())("PgArtifactMirror: a database session's artifacts through a working directory", () => {
  it("writes the artifacts back as rows and removes its working directory on close, for writers and readers", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    const ref = m.artifacts!.save("log line\n".repeat(1000), { toolType: "bash" });
    const writerDir = m.artifacts!.dir;
    expect(existsSync(writerDir)).toBe(true);
    await m.close();
    expect(existsSync(dirname(writerDir))).toBe(false);
    const pg = await backend.connect();
    expect((await pg.artifacts.list(m.sessionId)).length).toBeGreaterThan(0);

    const reader = await SessionManager.open(m.sessionId, { store: backend, readOnly: true });
    const readerDir = reader.artifacts!.dir;
    expect(readerDir).not.toBe(writerDir);
    expect(reader.artifacts!.getText(ref.id)).toBe("log line\n".repeat(1000));
    await reader.close();
    expect(existsSync(dirname(readerDir))).toBe(false);
  });

  /** The session's artifact rows: id → content, read back through the store. */
  async function rows(pg: PgStore, sessionId: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const info of await pg.artifacts.list(sessionId))
      out.set(info.id, (await pg.artifacts.get(sessionId, info.id))!.content.toString());
    return out;
  }

  it("a temp-dir cleaner emptying the working directory deletes no row, and the files come back", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const pg = await backend.connect();
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    const ref = m.artifacts!.save("tool output\n", { toolType: "bash" });
    m.artifacts!.saveAgentOutput(m.artifacts!.allocateAgentOutputId("reviewer"), "# done\n");
    await m.flush();
    const before = await rows(pg, m.sessionId);
    expect([...before.keys()].sort()).toEqual(["0.bash.log", "0.meta.json", "reviewer.md"]);

    // systemd-tmpfiles ages files by atime and removes them, then the emptied directories
    const dir = m.artifacts!.dir;
    for (const name of readdirSync(dir)) unlinkSync(join(dir, name));
    rmSync(dirname(dir), { recursive: true });
    await m.flush();
    expect(await rows(pg, m.sessionId)).toEqual(before);
    expect(m.artifacts!.getText(ref.id)).toBe("tool output\n");
    expect(m.artifacts!.getAgentOutput("reviewer")).toBe("# done\n");
    await m.close();
    expect(await rows(pg, m.sessionId)).toEqual(before);
  });

  it("one vanished file is not a deletion either: its row stays and the file is restored", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const pg = await backend.connect();
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    const ref = m.artifacts!.save("kept\n", { toolType: "bash" });
    await m.close();

    const w = await SessionManager.open(m.sessionId, { store: backend });
    unlinkSync(join(w.artifacts!.dir, "0.bash.log"));
    await w.flush();
    expect((await rows(pg, m.sessionId)).get("0.bash.log")).toBe("kept\n");
    expect(w.artifacts!.getText(ref.id)).toBe("kept\n");
    await w.close();
    expect((await rows(pg, m.sessionId)).get("0.bash.log")).toBe("kept\n");
  });

  it("an explicit removal (the store's tombstone) deletes the content row and keeps the tombstone", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const pg = await backend.connect();
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    m.artifacts!.save("gone soon\n", { toolType: "bash" });
    await m.flush();
    expect(m.artifacts!.clear()).toBe(1);
    await m.close();
    const after = await rows(pg, m.sessionId);
    expect([...after.keys()]).toEqual(["0.meta.json"]);
    expect(JSON.parse(after.get("0.meta.json")!)).toEqual({ v: 1, id: "0", removed: true });
  });

  it("an opened file keeps its stored mtime but gets a fresh access time (an atime cleaner leaves it alone)", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    m.artifacts!.save("old\n", { toolType: "bash" });
    const path = join(m.artifacts!.dir, "0.bash.log");
    const old = new Date("2020-01-01T00:00:00Z");
    (await import("node:fs")).utimesSync(path, old, old);
    await m.close();

    const opening = Math.floor(Date.now() / 1000) * 1000;
    for (const readOnly of [true, false]) {
      const r = await SessionManager.open(m.sessionId, { store: backend, readOnly });
      const st = statSync(join(r.artifacts!.dir, "0.bash.log"));
      expect(st.mtimeMs).toBe(old.getTime());
      expect(st.atimeMs).toBeGreaterThanOrEqual(opening);
      await r.close();
    }
  });

  /** A writer's session with one assistant message (so its row exists) over `backend`. */
  async function stored(backend: PostgresBackend): Promise<SessionManager> {
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    return m;
  }

  it("streams each file to and from chunk rows (a 5-byte chunk size stands in for the real one)", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url, { artifactChunkBytes: 5 });
    backends.push(backend);
    const m = await stored(backend);
    const text = `${"0123456789".repeat(6)}tail`;
    const ref = m.artifacts!.save(text, { toolType: "bash" });
    await m.close();
    const { rows } = await rawPool(url).query<{ n: number; bytes: Buffer }>(
      "SELECT n, bytes FROM artifact_chunks WHERE session_id = $1 AND id = '0.bash.log' ORDER BY n",
      [m.sessionId],
    );
    expect(rows.map((r) => r.bytes.length)).toEqual([...Array(12).fill(5), 4]);
    expect(Buffer.concat(rows.map((r) => r.bytes)).toString()).toBe(text);
    const r = await SessionManager.open(m.sessionId, { store: backend, readOnly: true });
    expect(r.artifacts!.getText(ref.id)).toBe(text);
    await r.close();
  });

  it("a working directory that cannot be listed (permissions changed) fails flush with PERSISTENCE_FAILED and changes no row", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const pg = await backend.connect();
    const m = await stored(backend);
    m.artifacts!.save("first\n", { toolType: "bash" });
    await m.flush();
    const before = await rows(pg, m.sessionId);
    m.artifacts!.save("second\n", { toolType: "bash" });
    const dir = m.artifacts!.dir;
    const restore = injectFault("readdirSync", (_, args) => (args[0] === dir ? "EACCES" : undefined));
    try {
      await expect(m.flush()).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    } finally {
      restore();
    }
    expect(await rows(pg, m.sessionId)).toEqual(before);
    await m.close();
    expect((await rows(pg, m.sessionId)).get("1.bash.log")).toBe("second\n");
  });

  it("a file that cannot be read, or restored, fails flush with PERSISTENCE_FAILED; no row is deleted", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const pg = await backend.connect();
    const m = await stored(backend);
    m.artifacts!.save("first\n", { toolType: "bash" });
    await m.flush();
    const before = await rows(pg, m.sessionId);
    const dir = m.artifacts!.dir;

    m.artifacts!.save("second\n", { toolType: "bash" });
    let restore = injectFault("openSync", (_, args) => (args[0] === join(dir, "1.bash.log") ? "EACCES" : undefined));
    try {
      await expect(m.flush()).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    } finally {
      restore();
    }
    expect(await rows(pg, m.sessionId)).toEqual(before);

    unlinkSync(join(dir, "0.bash.log"));
    restore = injectFault("openSync", (_, args) => (String(args[0]).startsWith(join(dir, ".pg-restore.")) ? "EACCES" : undefined));
    try {
      await expect(m.flush()).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    } finally {
      restore();
    }
    expect((await rows(pg, m.sessionId)).get("0.bash.log")).toBe("first\n");
    await m.close();
    const after = await rows(pg, m.sessionId);
    expect([after.get("0.bash.log"), after.get("1.bash.log")]).toEqual(["first\n", "second\n"]);
  });

  it("a row whose chunks do not add up is reported at open, left unread, and neither written over nor deleted", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url, { artifactChunkBytes: 4 });
    backends.push(backend);
    const m = await stored(backend);
    m.artifacts!.save("damaged soon\n", { toolType: "bash" });
    await m.close();
    const db = rawPool(url);
    await db.query("DELETE FROM artifact_chunks WHERE session_id = $1 AND id = '0.bash.log' AND n = 1", [m.sessionId]);
    const chunks = async () =>
      (await db.query("SELECT n FROM artifact_chunks WHERE session_id = $1 AND id = '0.bash.log' ORDER BY n", [m.sessionId])).rows;
    const before = await chunks();

    const warnings: Array<{ code: string; message: string }> = [];
    const w = await SessionManager.open(m.sessionId, { store: backend, onWarning: (x) => warnings.push(x) });
    expect(warnings.filter((x) => x.code === "PERSISTENCE_FAILED").map((x) => x.message)).toEqual([
      expect.stringContaining("0.bash.log is damaged"),
    ]);
    expect(existsSync(join(w.artifacts!.dir, "0.bash.log"))).toBe(false);
    // the store cannot tell and writes the name again: the damaged row stays as it is
    (await import("node:fs")).writeFileSync(join(w.artifacts!.dir, "0.bash.log"), "new bytes\n");
    await w.close();
    expect(await chunks()).toEqual(before);
    expect((await backend.connect().then((pg) => pg.artifacts.list(m.sessionId))).find((a) => a.id === "0.bash.log")).toMatchObject({
      damaged: true,
    });
  });

  it("an open that cannot fill its working directory fails (PERSISTENCE_FAILED), gives its lease back, leaves no directory", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const m = await stored(backend);
    m.artifacts!.save("output\n", { toolType: "bash" });
    await m.close();
    const root = workingDirsRoot();
    const ours = () => readdirSync(root).filter((n) => n.startsWith(`${process.pid}@`));
    const before = ours();
    const restore = injectFault("openSync", (_, args) => (String(args[0]).includes(".pg-restore.") ? "EACCES" : undefined));
    try {
      await expect(SessionManager.open(m.sessionId, { store: backend })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    } finally {
      restore();
    }
    expect(ours()).toEqual(before);
    const w = await SessionManager.open(m.sessionId, { store: backend });
    expect(w.artifacts!.getText("0")).toBe("output\n");
    await w.close();
  });
});
