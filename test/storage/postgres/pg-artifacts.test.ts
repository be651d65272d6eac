import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
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
});
