import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import type { SessionEntry, SessionHeader } from "../../../src/index.ts";
import { resolveSessionManagerOptions } from "../../../src/session/session-options.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

const header: SessionHeader = {
  type: "session",
  version: 3,
  id: "0199bbbb-0000-7000-8000-000000000001",
  timestamp: "2026-01-01T00:00:00.000Z",
  cwd: "/imp",
};
const entry = (n: number, text = `message ${n}`): SessionEntry => ({
  type: "message",
  id: `e${n}`,
  parentId: n === 1 ? null : `e${n - 1}`,
  timestamp: "2026-01-01T00:00:01.000Z",
  message: { role: "user", content: text },
});
const entries = (n: number) => Array.from({ length: n }, (_, i) => entry(i + 1));

describe.skipIf(!pgCluster())("PostgresBackend.importSession: re-imports never replace what the database holds", () => {
  it("imports, then reports unchanged, updated (the source grew), continued (the database grew) and IMPORT_CONFLICT", async () => {
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const options = resolveSessionManagerOptions({ store: backend });
    const none = () => null;
    expect((await backend.importSession(header, entries(3), options, none)).status).toBe("imported");
    expect((await backend.importSession(header, entries(3), options, none)).status).toBe("unchanged");
    expect((await backend.importSession(header, entries(5), options, none)).status).toBe("updated");
    expect((await backend.importSession(header, entries(4), options, none)).status).toBe("continued");
    const changed = [...entries(2), entry(3, "edited elsewhere")];
    await expect(backend.importSession(header, changed, options, none)).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    const stored = await SessionManager.open(header.id, { store: backend, readOnly: true });
    expect(stored.getEntries()).toEqual(entries(5));
    await stored.close();
  });
});
