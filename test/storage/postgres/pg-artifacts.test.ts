import { existsSync, readdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import type { PgStore } from "../../../src/postgres/index.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";

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
    for (const info of await pg.artifacts.list(sessionId)) out.set(info.id, (await pg.artifacts.get(sessionId, info.id))!.content.toString());
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
});
